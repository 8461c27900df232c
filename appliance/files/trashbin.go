package files

// The trash and the versions as Nextcloud serves them over WebDAV, for its
// apps' and its desktop client's trash and versions views, on the store's
// own trash (store/trash.go):
//
//	/remote.php/dav/trashbin/USER/trash/           what was deleted
//	/remote.php/dav/trashbin/USER/trash/NAME.dID   one item: GET, DELETE,
//	                                               MOVE to .../restore/NAME.dID
//	/remote.php/dav/trashbin/USER/restore/         where a MOVE restores to
//	/remote.php/dav/versions/USER/versions/FILEID/ a file's earlier versions
//	/remote.php/dav/versions/USER/versions/FILEID/ID   one: GET, DELETE,
//	                                               MOVE to .../restore/target
//
// DELETE of trash/ empties the trash of what was deleted; versions stay
// with their files until the purge takes them.

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/store"
)

const (
	ncTrashbin = "/remote.php/dav/trashbin/" // + USER
	ncVersions = "/remote.php/dav/versions/" // + USER
)

var (
	ncTrashFilename = ncName("trashbin-filename")
	ncTrashLocation = ncName("trashbin-original-location")
	ncTrashTime     = ncName("trashbin-deletion-time")
	ncTrashTitle    = ncName("trashbin-title")
	ncTrashByID     = ncName("trashbin-deleted-by-id")
	ncTrashByName   = ncName("trashbin-deleted-by-display-name")
	ncVersionLabel  = ncName("version-label")
	ncVersionAuthor = ncName("version-author")
)

// history is one request on a user's trash or versions.
type history struct {
	h    *Handler
	w    http.ResponseWriter
	r    *http.Request
	user string
	tree *store.Tree
	root string   // ncTrashbin+USER or ncVersions+USER
	path []string // the path below root, by segment
}

func (h *Handler) serveTrashbin(w http.ResponseWriter, r *http.Request, c auth.Caller) {
	h.serveHistory(w, r, c.User, ncTrashbin, (*history).trashbin)
}

func (h *Handler) serveVersions(w http.ResponseWriter, r *http.Request, c auth.Caller) {
	h.serveHistory(w, r, c.User, ncVersions, (*history).versions)
}

func (h *Handler) serveHistory(w http.ResponseWriter, r *http.Request, user, prefix string, serve func(*history)) {
	rest, ok := underPrefix(r.URL.Path, prefix+user)
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	tree, ok := h.openTree(w, r, user)
	if !ok {
		return
	}
	defer tree.Close()
	q := &history{h: h, w: w, r: r, user: user, tree: tree, root: prefix + user}
	for _, s := range strings.Split(rest, "/") {
		if s != "" {
			q.path = append(q.path, s)
		}
	}
	serve(q)
}

// trashbin answers a request below trashbin/USER.
func (q *history) trashbin() {
	p, m := q.path, q.r.Method
	switch {
	case m == "PROPFIND" && len(p) == 0:
		q.collections("trash", "restore")
	case m == "PROPFIND" && len(p) == 1 && (p[0] == "trash" || p[0] == "restore"):
		q.listTrash(p[0] == "trash")
	case m == http.MethodDelete && len(p) == 1 && p[0] == "trash":
		q.emptyTrash()
	case len(p) == 2 && p[0] == "trash":
		it, ok := q.deleted(p[1])
		if !ok {
			return
		}
		q.item(it, func(m *davxml.Writer, req davxml.Propfind) { q.trashEntry(m, req, it) }, p[1])
	case len(p) > 2 && p[0] == "trash":
		if it, ok := q.deleted(p[1]); ok {
			q.inTrashedFolder(it, path.Join(p[2:]...))
		}
	case len(p) <= 2 && (len(p) == 0 || p[0] == "trash" || p[0] == "restore"):
		q.notAllowed("PROPFIND")
	default:
		http.Error(q.w, "not found", http.StatusNotFound)
	}
}

// item answers a request on one trash item or version: its properties
// (entry), its content, its deletion, or its restore by a MOVE to
// restore/NAME.
func (q *history) item(it store.TrashItem, entry func(*davxml.Writer, davxml.Propfind), name string) {
	switch q.r.Method {
	case "PROPFIND":
		q.propfind(entry, nil)
	case http.MethodGet, http.MethodHead:
		q.download(it)
	case http.MethodDelete:
		q.forget(it)
	case "MOVE":
		if dst, ok := q.destination(); ok && len(dst) == 2 && dst[0] == "restore" {
			q.restore(it)
			return
		}
		http.Error(q.w, "restored by a MOVE to "+q.root+"/restore/"+name, http.StatusForbidden)
	default:
		q.notAllowed("PROPFIND, GET, HEAD, DELETE, MOVE")
	}
}

// versions answers a request below versions/USER.
func (q *history) versions() {
	p, m := q.path, q.r.Method
	switch {
	case m == "PROPFIND" && len(p) == 0:
		q.collections("versions", "restore")
	case m == "PROPFIND" && len(p) == 1 && (p[0] == "versions" || p[0] == "restore"):
		q.list(nil) // the files with versions are reached by id, not listed
	case len(p) == 2 && p[0] == "versions":
		if m != "PROPFIND" {
			q.notAllowed("PROPFIND")
			return
		}
		if _, vs, ok := q.fileVersions(p[1]); ok {
			q.list(func(m *davxml.Writer, req davxml.Propfind) {
				for _, it := range vs {
					q.versionEntry(m, req, p[1], it)
				}
			})
		}
	case len(p) == 3 && p[0] == "versions":
		fp, vs, ok := q.fileVersions(p[1])
		if !ok {
			return
		}
		it, ok := findVersion(vs, p[2])
		if !ok {
			http.Error(q.w, "no such version", http.StatusNotFound)
			return
		}
		// A shared file's versions are its owner's: read, restored and
		// deleted there, as the share allows.
		need := rights.Read
		if m == http.MethodDelete || m == "MOVE" {
			need = rights.Update
		}
		holder, err := q.tree.HistoryOf(fp, need)
		if err != nil {
			writeStoreError(q.w, err)
			return
		}
		owned := *q
		owned.tree = holder
		owned.item(it, func(m *davxml.Writer, req davxml.Propfind) { q.versionEntry(m, req, p[1], it) }, "target")
	case len(p) <= 1:
		q.notAllowed("PROPFIND")
	default:
		http.Error(q.w, "not found", http.StatusNotFound)
	}
}

func (q *history) notAllowed(allow string) {
	q.w.Header().Set("Allow", "OPTIONS, "+allow)
	if q.r.Method == http.MethodOptions {
		q.w.Header().Set("DAV", "1")
		return
	}
	http.Error(q.w, "method not allowed here", http.StatusMethodNotAllowed)
}

// href is the URL path of the segments below root.
func (q *history) href(segments ...string) string {
	return q.root + "/" + strings.Join(segments, "/")
}

// list answers a PROPFIND of a collection: the collection, and unless
// Depth is 0 its members (written by members, if any).
func (q *history) list(members func(m *davxml.Writer, req davxml.Propfind)) {
	name := q.user
	if len(q.path) > 0 {
		name = q.path[len(q.path)-1]
	}
	q.propfind(func(m *davxml.Writer, req davxml.Propfind) {
		collectionEntry(m, req, q.href(q.path...), name)
	}, members)
}

// propfind answers a PROPFIND: self, then unless Depth is 0 the members.
func (q *history) propfind(self, members func(m *davxml.Writer, req davxml.Propfind)) {
	req, err := davxml.ReadPropfind(q.r.Body)
	if err != nil {
		http.Error(q.w, err.Error(), http.StatusBadRequest)
		return
	}
	m := davxml.NewWriter(q.w)
	self(m, req)
	if members != nil && q.r.Header.Get("Depth") != "0" {
		members(m, req)
	}
	m.Close("")
}

// collectionEntry writes a collection of the trash or the versions. What
// it holds changes without its own date or tag changing, so both are
// now's: a client never takes it as unchanged.
func collectionEntry(m *davxml.Writer, req davxml.Propfind, href, name string) {
	if !strings.HasSuffix(href, "/") {
		href += "/"
	}
	now := time.Now()
	listedEntry(m, req, href, entryProps(name, true, 0, now, strconv.FormatInt(now.UnixNano(), 36)))
}

// collections lists the user's root: the named collections.
func (q *history) collections(names ...string) {
	q.list(func(m *davxml.Writer, req davxml.Propfind) {
		for _, n := range names {
			collectionEntry(m, req, q.href(n), n)
		}
	})
}

// listTrash lists trash/ (what was deleted) or restore/ (nothing).
func (q *history) listTrash(trash bool) {
	items, err := q.tree.Bin().Items()
	if err != nil {
		q.h.Log.Error("cannot read the trash", "user", q.user, "err", err)
		http.Error(q.w, "cannot read your trash", http.StatusInternalServerError)
		return
	}
	q.list(func(m *davxml.Writer, req davxml.Propfind) {
		for _, it := range items {
			if trash && it.Kind == store.KindDeleted {
				q.trashEntry(m, req, it)
			}
		}
	})
}

// trashName is an item's name in trash/: its old name, ".d" and its ID
// (Nextcloud's has the deletion time there).
func trashName(it store.TrashItem) string { return path.Base(it.Path) + ".d" + it.ID }

// trashID is the ID a trash/ name ends with.
func trashID(name string) string {
	i := strings.LastIndex(name, ".d")
	if i < 0 {
		return ""
	}
	return name[i+2:]
}

func (q *history) trashEntry(m *davxml.Writer, req davxml.Propfind, it store.TrashItem) {
	name := trashName(it)
	href := q.href("trash", name)
	if it.Dir {
		href += "/"
	}
	props := q.trashProps(it, name, "", it.Dir, it.Size, it.ModTime, it.FileID)
	props = withProp(props, davxml.Name("displayname"), davxml.Text(path.Base(it.Path))) // the name it had
	listedEntry(m, req, href, props)
}

// trashProps are the properties of what the trash holds: an item, or
// (sub) something in a trashed folder.
func (q *history) trashProps(it store.TrashItem, name, sub string, dir bool, size int64, mtime time.Time, fileID uint64) []prop {
	loc := it.Path
	if sub != "" {
		loc = path.Join(loc, sub)
	}
	props := append(entryProps(name, dir, size, mtime, it.ID+sub),
		prop{ncTrashFilename, davxml.Text(path.Base(loc))},
		prop{ncTrashLocation, davxml.Text(loc)},
		prop{ncTrashTime, strconv.FormatInt(it.At.Unix(), 10)},
		prop{ncTrashTitle, davxml.Text(path.Base(loc))},
		prop{ncTrashByID, davxml.Text(q.user)},
		prop{ncTrashByName, davxml.Text(q.user)},
		prop{ocSize, strconv.FormatInt(size, 10)},
		prop{ocPermissions, "GD"},
		prop{ncHasPreview, strconv.FormatBool(!dir && sub == "" && filetype.Previewable(loc))}, // files_trashbin/preview, by id
		prop{ncMountType, ""},
	)
	if fileID != 0 { // an item's; what a trashed folder holds has none to give
		props = append(props, prop{ocFileID, strconv.FormatUint(fileID, 10)}, prop{ocID, ocIDOf(fileID)})
	}
	return props
}

// inTrashedFolder answers a request for something in a trashed folder:
// listed and read, not restored or deleted alone (the folder is).
func (q *history) inTrashedFolder(it store.TrashItem, sub string) {
	root, err := q.tree.Bin().Root(it.ID)
	if err != nil {
		http.Error(q.w, "not found", http.StatusNotFound)
		return
	}
	defer root.Close()
	fi, err := root.Lstat(sub)
	if err != nil || !fi.IsDir() && !fi.Mode().IsRegular() {
		http.Error(q.w, "not found", http.StatusNotFound)
		return
	}
	href := q.href(q.path...)
	entry := func(m *davxml.Writer, req davxml.Propfind, href, sub string, fi fs.FileInfo) {
		size := fi.Size()
		if fi.IsDir() {
			size, _ = store.FilesSize(root.FS(), sub)
			href = strings.TrimSuffix(href, "/") + "/"
		}
		listedEntry(m, req, href, q.trashProps(it, fi.Name(), sub, fi.IsDir(), size, fi.ModTime(), 0))
	}
	switch q.r.Method {
	case "PROPFIND":
		q.propfind(func(m *davxml.Writer, req davxml.Propfind) { entry(m, req, href, sub, fi) },
			func(m *davxml.Writer, req davxml.Propfind) {
				if !fi.IsDir() {
					return
				}
				dir, err := root.Open(sub)
				if err != nil {
					return
				}
				defer dir.Close()
				kids, _ := dir.Readdir(-1)
				for _, k := range kids {
					if k.IsDir() || k.Mode().IsRegular() {
						entry(m, req, strings.TrimSuffix(href, "/")+"/"+k.Name(), path.Join(sub, k.Name()), k)
					}
				}
			})
	case http.MethodGet, http.MethodHead:
		f, err := root.Open(sub)
		if err != nil || fi.IsDir() {
			http.Error(q.w, "a folder in the trash is listed, not downloaded", http.StatusMethodNotAllowed)
			return
		}
		defer f.Close()
		q.w.Header().Set("Content-Type", filetype.Of(sub))
		http.ServeContent(q.w, q.r, "", fi.ModTime(), f)
	default:
		http.Error(q.w, "what a trashed folder holds comes back with the folder: restore "+trashName(it), http.StatusForbidden)
	}
}

// deleted is the deleted item a trash/ name names, or it answers 404.
func (q *history) deleted(name string) (store.TrashItem, bool) {
	items, err := q.tree.Bin().Items()
	if err == nil {
		if it, ok := findItem(items, trashID(name)); ok && it.Kind == store.KindDeleted && trashName(it) == name {
			return it, true
		}
	}
	http.Error(q.w, "no such item in the trash", http.StatusNotFound)
	return store.TrashItem{}, false
}

func findItem(items []store.TrashItem, id string) (store.TrashItem, bool) {
	for _, it := range items {
		if it.ID == id {
			return it, true
		}
	}
	return store.TrashItem{}, false
}

// fileVersions is the file with the id in a versions/ path and its
// versions, or it answers 404.
func (q *history) fileVersions(id string) (string, []store.TrashItem, bool) {
	fileID, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		http.Error(q.w, "a file id is a number", http.StatusNotFound)
		return "", nil, false
	}
	p, in, err := q.tree.Find(fileID)
	if err == nil && in.IsDir() {
		err = fmt.Errorf("%s is a folder: %w", p, fs.ErrNotExist)
	}
	var vs []store.TrashItem
	if err == nil {
		vs, err = q.tree.Bin().Versions(p)
	}
	if err != nil {
		code, msg := storeStatus(err)
		http.Error(q.w, msg, code)
		return "", nil, false
	}
	return p, vs, true
}

// versionName is a version's name in its file's collection: its date in
// seconds, as Nextcloud names them and its Android app expects (it builds
// the name it restores from getlastmodified).
func versionName(it store.TrashItem) string { return strconv.FormatInt(it.ModTime.Unix(), 10) }

// findVersion is the newest of vs named name.
func findVersion(vs []store.TrashItem, name string) (store.TrashItem, bool) {
	for _, it := range vs {
		if versionName(it) == name {
			return it, true
		}
	}
	return store.TrashItem{}, false
}

func (q *history) versionEntry(m *davxml.Writer, req davxml.Propfind, fileID string, it store.TrashItem) {
	name := versionName(it)
	props := append(entryProps(name, false, it.Size, it.ModTime, it.ID),
		prop{ncVersionLabel, ""},
		prop{ncVersionAuthor, davxml.Text(q.user)},
		prop{ncHasPreview, "false"},
	)
	props = withProp(props, davxml.Name("getcontenttype"), davxml.Text(filetype.Of(it.Path))) // the file's type, not its name's
	listedEntry(m, req, q.href("versions", fileID, name), props)
}

// destination is the Destination header's path below root, by segment.
func (q *history) destination() ([]string, bool) {
	u, err := url.Parse(q.r.Header.Get("Destination"))
	if err != nil {
		return nil, false
	}
	rest, ok := underPrefix(u.Path, q.root)
	if !ok {
		return nil, false
	}
	var segs []string
	for _, s := range strings.Split(rest, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return segs, true
}

// download answers a GET or HEAD of a trashed file or a version.
func (q *history) download(it store.TrashItem) {
	f, err := q.tree.Bin().Open(it.ID)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			http.Error(q.w, "no such item", http.StatusNotFound)
			return
		}
		http.Error(q.w, "a folder in the trash is restored, not downloaded", http.StatusMethodNotAllowed)
		return
	}
	defer f.Close()
	h := q.w.Header()
	h.Set("Content-Type", filetype.Of(it.Path))
	h.Set("ETag", quote(it.ID))
	h.Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(path.Base(it.Path)))
	http.ServeContent(q.w, q.r, "", it.ModTime, f)
}

// forget deletes an item from the trash for good.
func (q *history) forget(it store.TrashItem) {
	if err := q.tree.Bin().Delete(it.ID); err != nil {
		writeStoreError(q.w, err)
		return
	}
	q.h.Log.Info("deleted from the trash", "user", q.user, "path", it.Path, "kind", it.Kind)
	q.w.WriteHeader(http.StatusNoContent)
}

// emptyTrash deletes for good what was deleted (not the versions).
func (q *history) emptyTrash() {
	if err := q.tree.Bin().Empty(store.KindDeleted); err != nil {
		q.h.Log.Error("cannot empty the trash", "user", q.user, "err", err)
		writeStoreError(q.w, err)
		return
	}
	q.h.Log.Info("emptied the trash", "user", q.user)
	q.w.WriteHeader(http.StatusNoContent)
}

// restore puts an item back: a deleted one at its path (or beside it), a
// version in place of its file.
func (q *history) restore(it store.TrashItem) {
	to, displaced, err := q.tree.Bin().Restore(it.ID)
	if err != nil {
		q.h.Log.Warn("cannot restore", "user", q.user, "path", it.Path, "err", err)
		writeStoreError(q.w, err)
		return
	}
	q.h.Log.Info("restored", "user", q.user, "path", it.Path, "to", to, "kind", it.Kind, "displaced", displaced)
	q.w.WriteHeader(http.StatusCreated)
}

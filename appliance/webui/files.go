package webui

import (
	"archive/zip"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/refusal"
	"github.com/bonesync/bonesync/appliance/store"
)

// entry is one row of a folder's listing.
type entry struct {
	Name     string
	Href     string // relative to the folder's page
	Dir      bool
	Size     int64
	Modified time.Time
	Preview  bool
	Thumb    string // its thumbnail's URL, for a picture
}

type crumb struct{ Name, Href string }

type filesData struct {
	Path   string // "/" or "/a/b/"
	DAV    string // the folder's WebDAV URL path, for the page's script
	Crumbs []crumb
	Rows   []entry
	Sort   string
	Desc   bool
	Total  int64
	Quota  int64
	Used   int64
	Trash  bool
}

// files serves /files/PATH: a folder's page, a file's download (with
// Range), its preview, or a folder as a zip (?zip).
func (u *Files) files(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	tree, ok := openTree(w, u.Log, u.Store, u.Users, sess)
	if !ok {
		return
	}
	defer tree.Close()
	// Cleaned: /files/%2e%2e/ is the top folder, whose zip holds no ../.
	name := path.Clean("/" + r.PathValue("path"))
	in, err := tree.Info(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			p := u.base(sess, "Not found", "files")
			p.Problem = "There is no " + name + " in your files."
			u.render(w, http.StatusNotFound, "message", p)
			return
		}
		refusal.Write(w, err)
		return
	}
	q := r.URL.Query()
	if in.IsDir() {
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
			return
		}
		if q.Has("zip") {
			zipFolder(w, r, u.Log, tree, name, folderName(name))
			return
		}
		u.listing(w, r, sess, tree, name)
		return
	}
	switch {
	case q.Has("view"):
		u.preview(w, r, sess, tree, name, in)
	case q.Has("raw"):
		sendFile(w, r, tree, name, path.Base(name), in, true)
	default:
		sendFile(w, r, tree, name, path.Base(name), in, false)
	}
}

func (u *Files) listing(w http.ResponseWriter, r *http.Request, sess auth.Caller, tree fileTree, name string) {
	dir, err := tree.OpenDir(name)
	if err != nil {
		refusal.Write(w, err)
		return
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		refusal.Write(w, err)
		return
	}
	d := filesData{Path: strings.TrimSuffix(name, "/") + "/", Trash: u.Store.TrashKeep() > 0}
	d.DAV = (&url.URL{Path: u.DAV + d.Path}).EscapedPath()
	for _, n := range names {
		if store.IsInternal(n) {
			continue
		}
		in, ok, err := tree.InfoIn(dir, n)
		if !ok {
			in, err = tree.Info(path.Join(name, n))
		}
		if err != nil {
			continue // gone since, or a symlink out of the tree
		}
		// "./" first: a name such as https:evil.example is a path here,
		// never a link off the box, and javascript:x is not disabled.
		e := entry{Name: n, Href: "./" + url.PathEscape(n), Dir: in.IsDir(), Size: in.Size(), Modified: in.ModTime()}
		if e.Dir {
			e.Href += "/"
			if e.Size = in.TreeSize; e.Size < 0 {
				e.Size, _ = tree.Size(path.Join(name, n))
			}
		} else {
			e.Preview = previewKind(n) != ""
			if u.Thumbs && filetype.Previewable(n) {
				e.Thumb = ThumbURL(path.Join(name, n), 128, false)
			}
		}
		if !e.Dir && !in.Mode().IsRegular() {
			continue
		}
		d.Total += e.Size
		d.Rows = append(d.Rows, e)
	}
	d.Sort, d.Desc = r.URL.Query().Get("sort"), r.URL.Query().Get("desc") == "1"
	if d.Sort != "size" && d.Sort != "date" {
		d.Sort = "name"
	}
	sortEntries(d.Rows, d.Sort, d.Desc)
	d.Crumbs = crumbs(name)
	d.Quota = tree.Quota()
	d.Used, _ = tree.Usage()
	title := "Files"
	if d.Path != "/" {
		title = path.Base(d.Path)
	}
	p := u.base(sess, title, "files")
	p.Data = d
	u.render(w, http.StatusOK, "files", p)
}

// sortEntries orders folders before files, then by the column asked for.
func sortEntries(rows []entry, by string, desc bool) {
	less := func(a, b entry) bool { return strings.ToLower(a.Name) < strings.ToLower(b.Name) }
	switch by {
	case "size":
		less = func(a, b entry) bool { return a.Size < b.Size }
	case "date":
		less = func(a, b entry) bool { return a.Modified.Before(b.Modified) }
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Dir != rows[j].Dir {
			return rows[i].Dir
		}
		if desc {
			return less(rows[j], rows[i])
		}
		return less(rows[i], rows[j])
	})
}

func crumbs(name string) []crumb {
	out := []crumb{{"Files", FilesPrefix + "/"}}
	href := FilesPrefix + "/"
	for _, part := range strings.Split(strings.Trim(name, "/"), "/") {
		if part == "" {
			continue
		}
		href += url.PathEscape(part) + "/"
		out = append(out, crumb{part, href})
	}
	return out
}

// previewKind is "image" or "text" for the files the page previews.
func previewKind(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".bmp", ".ico", ".svg":
		return "image"
	case ".txt", ".md", ".csv", ".log", ".json", ".xml", ".yaml", ".yml", ".toml", ".ini", ".conf", ".cfg",
		".go", ".c", ".h", ".py", ".js", ".ts", ".css", ".html", ".sh", ".rs", ".java", ".ics", ".vcf", ".tex", ".srt":
		return "text"
	}
	return ""
}

// sendFile sends the file p (in) as base, with Range and conditional
// requests, as an attachment or (raw) inline for a preview: for the file
// pages and a link's alike. Either way it is data, never a page of the
// box's: it runs in a sandbox without scripts.
func sendFile(w http.ResponseWriter, r *http.Request, tree fileTree, p, base string, in store.Info, raw bool) {
	f, err := tree.Open(p)
	if err != nil {
		refusal.Write(w, err)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'")
	h.Set("ETag", `"`+in.ETag+`"`)
	h.Set("Cache-Control", "private, no-cache")
	if raw {
		switch previewKind(base) {
		case "image":
			h.Set("Content-Type", filetype.Of(base))
		case "text":
			h.Set("Content-Type", "text/plain; charset=utf-8")
		default:
			h.Set("Content-Type", "application/octet-stream")
		}
		h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": base}))
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": base}))
	}
	http.ServeContent(w, r, "", in.ModTime(), f)
}

type previewData struct {
	Name, Raw, Download, Folder string
	Shown                       string // a picture's large preview, shown rather than the file
	Kind                        string // image, text or ""
	Text                        string
	Cut                         bool
	Size                        int64
	Modified                    time.Time
}

// previewText is how much of a text file its preview shows.
const previewText = 256 << 10

func (u *Files) preview(w http.ResponseWriter, r *http.Request, sess auth.Caller, tree fileTree, name string, in store.Info) {
	base := path.Base(name)
	esc := url.PathEscape(base)
	esc = "./" + esc // a path on the box, whatever the name (https:x, javascript:x)
	d := previewData{Name: base, Raw: esc + "?raw", Download: esc, Folder: "./", Kind: previewKind(base), Size: in.Size(), Modified: in.ModTime()}
	if u.Thumbs && filetype.Previewable(base) {
		d.Shown = ThumbURL(name, 1024, true) // upright, and a fraction of a photo's bytes
	}
	if d.Kind == "text" {
		f, err := tree.Open(name)
		if err != nil {
			refusal.Write(w, err)
			return
		}
		b, _ := io.ReadAll(io.LimitReader(f, previewText+1))
		f.Close()
		if len(b) > previewText {
			b, d.Cut = b[:previewText], true
			for len(b) > 0 && !utf8.Valid(b) { // a character cut in two
				b = b[:len(b)-1]
			}
		}
		if utf8.Valid(b) && !strings.ContainsRune(string(b), 0) {
			d.Text = string(b)
		} else {
			d.Kind = ""
		}
	}
	p := u.base(sess, base, "files")
	p.Data = d
	u.render(w, http.StatusOK, "preview", p)
}

// folderName is what a zip of the folder name of a user's files is
// called: its own name, "files" for the top.
func folderName(name string) string {
	base := path.Base(name)
	if name == "/" || base == "/" || base == "." {
		return "files"
	}
	return base
}

// zipFolder streams a folder as a zip made as it is sent: nothing is
// staged on the card and memory stays small whatever the folder's size.
// Files are stored, not compressed: the board's one core would be the
// bottleneck, and photos and videos do not shrink. archive/zip writes
// Zip64 records where a file or the archive passes 4 GiB. The archive
// is named base (base.zip), and holds the folder as base/: a user's
// folder's own name ("files" for the top of their files), a link's
// shared folder's.
func zipFolder(w http.ResponseWriter, r *http.Request, log *slog.Logger, tree fileTree, name, base string) {
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": base + ".zip"}))
	h.Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		return // the archive is made as it is sent: a HEAD reads no file
	}
	zw := zip.NewWriter(w)
	err := zipAdd(zw, tree, name, base)
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		// The status is sent: all that can be done is to cut the
		// archive short, which every unzip reports as damaged.
		log.Warn("web: zip cut short", "path", name, "err", err)
		if c, ok := w.(interface{ Abort() }); ok {
			c.Abort()
		}
		panic(http.ErrAbortHandler)
	}
}

func zipAdd(zw *zip.Writer, tree fileTree, dir, prefix string) error {
	entries, err := tree.ReadDir(dir)
	if err != nil {
		return err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	if len(entries) == 0 {
		_, err := zw.CreateHeader(&zip.FileHeader{Name: prefix + "/", Method: zip.Store})
		return err
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		zname := prefix + "/" + e.Name()
		switch {
		case e.IsDir():
			if err := zipAdd(zw, tree, p, zname); err != nil {
				return err
			}
		case e.Mode().IsRegular():
			if err := zipFile(zw, tree, p, zname, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func zipFile(zw *zip.Writer, tree fileTree, p, zname string, fi fs.FileInfo) error {
	f, err := tree.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted while the archive was made
		}
		return err
	}
	defer f.Close()
	hdr := &zip.FileHeader{Name: zname, Method: zip.Store, Modified: fi.ModTime()}
	hdr.SetMode(fi.Mode().Perm())
	out, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, f)
	return err
}

// hit is one search result.
type hit struct {
	Name, Folder, Href, FolderHref string
	Dir                            bool
	Size                           int64
	Modified                       time.Time
}

type searchData struct {
	Query string
	Hits  []hit
	More  bool
}

// searchLimit is how many results the search page shows.
const searchLimit = 200

// search serves /search?q=TERM: the files and folders whose names hold
// the term, newest first.
func (u *Files) search(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	tree, ok := openTree(w, u.Log, u.Store, u.Users, sess)
	if !ok {
		return
	}
	defer tree.Close()
	d := searchData{Query: strings.TrimSpace(r.FormValue("q"))}
	pg := u.base(sess, "Search", "files")
	if d.Query != "" {
		paths, infos, err := u.Search.FindByName(tree, "/", d.Query, searchLimit+1)
		if err != nil {
			pg.Problem = "The search failed: " + err.Error()
		}
		d.More = len(paths) > searchLimit
		for i, p := range paths[:min(len(paths), searchLimit)] {
			h := hit{Name: path.Base(p), Folder: path.Dir(p), Dir: infos[i].IsDir(), Size: infos[i].Size(), Modified: infos[i].ModTime(),
				FolderHref: FolderURL(path.Dir(p))}
			if h.Dir {
				h.Href, h.Size = FolderURL(p), infos[i].TreeSize
			} else {
				h.Href = (&url.URL{Path: FilesPrefix + p}).EscapedPath()
				if previewKind(p) != "" {
					h.Href += "?view"
				}
			}
			d.Hits = append(d.Hits, h)
		}
		pg.Title = "Search: " + d.Query
	}
	pg.Data = d
	u.render(w, http.StatusOK, "search", pg)
}

// byID serves /index.php/f/ID: the folder, or the file's page.
func (u *Files) byID(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	tree, ok := openTree(w, u.Log, u.Store, u.Users, who)
	if !ok {
		return
	}
	defer tree.Close()
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	var p string
	var in store.Info
	if err == nil {
		p, in, err = tree.Find(id)
	}
	if err != nil {
		http.Redirect(w, r, FilesPrefix+"/", http.StatusSeeOther)
		return
	}
	if in.IsDir() {
		http.Redirect(w, r, FolderURL(p), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, (&url.URL{Path: FilesPrefix + p}).EscapedPath()+"?view", http.StatusSeeOther)
}

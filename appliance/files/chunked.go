package files

// Nextcloud's chunked uploads ("chunking 1.0", the desktop client's for
// files over 10 MB): MKCOL uploads/USER/ID, PUT uploads/USER/ID/00001...,
// then MOVE uploads/USER/ID/.file to the destination, which assembles the
// parts in name order into one store Upload: hashed, checked against
// OC-Checksum and OC-Total-Length, dated with X-OC-Mtime and committed
// atomically like any other upload. A dropped connection loses at most the
// part in flight: parts are written under a temporary name and renamed when
// whole, and a client that comes back lists the folder (PROPFIND) and sends
// what is missing. Parts not assembled within a day are removed.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/store"
)

// partSuffix ends the name a part is written under until it is whole.
const partSuffix = ".part"

// chunks is one request on a user's chunk folder.
type chunks struct {
	h    *Handler
	w    http.ResponseWriter
	r    *http.Request
	user string
	root *os.Root
	name string // in the folder, "." for the folder itself
}

func (h *Handler) serveUploads(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	prefix := ncUploads + user
	rest, ok := underPrefix(r.URL.Path, prefix)
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	root, err := h.Store.Chunks(user)
	if err != nil {
		h.Log.Error("cannot open the chunk folder", "user", user, "err", err)
		http.Error(w, "cannot open your uploads", http.StatusInternalServerError)
		return
	}
	defer root.Close()
	c := &chunks{h: h, w: w, r: r, user: user, root: root, name: chunkName(rest)}
	switch {
	case r.Method == "MOVE" && path.Base(c.name) == ".file":
		c.assemble(path.Dir(c.name))
	case r.Method == "MKCOL":
		h.Store.ExpireChunks() // a new transfer: forget the abandoned ones
		c.mkcol()
	case r.Method == http.MethodPut:
		c.put()
	case r.Method == "PROPFIND":
		c.propfind()
	case r.Method == http.MethodDelete:
		c.delete()
	default:
		http.Error(w, "method not allowed on an upload", http.StatusMethodNotAllowed)
	}
}

// chunkName is a path below the chunk folder, relative to it.
func chunkName(p string) string {
	c := path.Clean("/" + p)[1:]
	if c == "" {
		return "."
	}
	return c
}

// mkcol makes a transfer's folder.
func (c *chunks) mkcol() {
	err := c.root.Mkdir(c.name, 0o700)
	switch {
	case err == nil:
		c.w.WriteHeader(http.StatusCreated)
	case errors.Is(err, fs.ErrExist):
		http.Error(c.w, "it exists", http.StatusMethodNotAllowed)
	case errors.Is(err, fs.ErrNotExist):
		http.Error(c.w, "the folder it would be in does not exist", http.StatusConflict)
	default:
		c.refused(err)
	}
}

// put writes a part, under a name of its own until its body arrived whole:
// a client that gives up on a part and sends it again must not have its
// new copy truncated or removed by the old request, still finishing. Parts
// count against the quota with the user's files.
func (c *chunks) put() {
	r := c.r
	if strings.HasSuffix(c.name, partSuffix) || c.name == "." {
		http.Error(c.w, "bad part name", http.StatusBadRequest)
		return
	}
	if !c.fits() {
		return
	}
	tmp := fmt.Sprintf("%s.%016x%s", c.name, rand.Uint64(), partSuffix)
	f, err := c.root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			http.Error(c.w, "no such transfer: MKCOL it first", http.StatusConflict)
			return
		}
		c.refused(err)
		return
	}
	body := &putBody{ReadCloser: r.Body, want: r.ContentLength}
	_, err = io.Copy(f, body)
	if err == nil || body.err != nil {
		if cerr := body.complete(); cerr != nil {
			err = cerr
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.root.Rename(tmp, c.name)
	}
	if err != nil {
		c.root.Remove(tmp)
		c.refused(store.NoSpace(err))
		return
	}
	c.w.WriteHeader(http.StatusCreated)
}

// fits answers, and returns false, when the user has a quota and a part
// would take the files and parts past it.
func (c *chunks) fits() bool {
	q := c.h.Quotas.Quota(c.user)
	if q <= 0 {
		return true
	}
	if c.r.ContentLength < 0 {
		http.Error(c.w, "a part needs a Content-Length", http.StatusLengthRequired)
		return false
	}
	tree, err := c.h.Store.Tree(c.user)
	if err == nil {
		tree.SetQuota(q)
		err = tree.Fits(chunkBytes(c.root) + c.r.ContentLength)
		tree.Close()
	}
	if err != nil {
		writeStoreError(c.w, err)
		return false
	}
	return true
}

// propfind lists the chunk folder, a transfer or a part: a client that
// comes back after a dropped connection sends again what is not there
// whole (parts still being written are not listed).
func (c *chunks) propfind() {
	req, err := davxml.ReadPropfind(c.r.Body)
	if err != nil {
		http.Error(c.w, err.Error(), http.StatusBadRequest)
		return
	}
	fi, err := c.root.Stat(c.name)
	if err != nil {
		writeStoreError(c.w, err)
		return
	}
	href := ncUploads + c.user + "/"
	if c.name != "." {
		href += c.name
	}
	m := davxml.NewWriter(c.w)
	chunkEntry(m, req, href, fi)
	if fi.IsDir() && c.r.Header.Get("Depth") != "0" {
		if entries, err := readDir(c.root, c.name); err == nil {
			for _, e := range entries {
				if !strings.HasSuffix(e.Name(), partSuffix) {
					chunkEntry(m, req, path.Join(href, e.Name()), e)
				}
			}
		}
	}
	m.Close("")
}

// chunkEntry writes one entry of a chunk folder's listing: a folder or a
// part.
func chunkEntry(m *davxml.Writer, req davxml.Propfind, href string, fi fs.FileInfo) {
	if fi.IsDir() && !strings.HasSuffix(href, "/") {
		href += "/"
	}
	etag := fmt.Sprintf("%x%x", fi.ModTime().UnixNano(), fi.Size())
	props := entryProps(fi.Name(), fi.IsDir(), fi.Size(), fi.ModTime(), etag)
	if !fi.IsDir() {
		props = props[:len(props)-1] // a part has no type of its own
	}
	listedEntry(m, req, href, props)
}

// delete removes a transfer (a client that gives up) or a part.
func (c *chunks) delete() {
	if c.name == "." {
		http.Error(c.w, "the upload folder itself stays", http.StatusForbidden)
		return
	}
	if _, err := c.root.Stat(c.name); err != nil {
		writeStoreError(c.w, err)
		return
	}
	if err := c.root.RemoveAll(c.name); err != nil {
		c.refused(err)
		return
	}
	c.w.WriteHeader(http.StatusNoContent)
}

// refused answers a change the chunk folder refused, and logs why: a
// part cut short (the client resends it) as a warning.
func (c *chunks) refused(err error) {
	log := c.h.Log.Error
	if errors.Is(err, errIncomplete) {
		log = c.h.Log.Warn
	}
	log("upload part failed", "method", c.r.Method, "user", c.user, "path", c.r.URL.Path, "err", err)
	writeStoreError(c.w, err)
}

// assemble answers the MOVE of uploads/USER/ID/.file: the parts of ID
// (transfer, relative to the chunk folder), in name order, become the file
// at the Destination.
func (c *chunks) assemble(transfer string) {
	w, r := c.w, c.r
	dstPrefix, dst, ok := davDestination(r, c.user)
	if !ok {
		http.Error(w, "the Destination is not in your files", http.StatusBadRequest)
		return
	}
	tree, ok := c.h.openTree(w, r, c.user)
	if !ok {
		return
	}
	defer tree.Close()
	defer c.h.paths.lock(c.user, dst)()
	q := &request{h: c.h, w: w, r: r, tree: tree, user: c.user, prefix: dstPrefix, name: dst}
	if !q.conditions(locks.Change{Path: dst, Tree: true, Member: true}) {
		return
	}
	up, err := newPutInfo(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	parts, total, err := chunkParts(c.root, transfer)
	if err != nil {
		c.refused(err)
		return
	}
	if len(parts) == 0 {
		http.Error(w, "no parts were uploaded", http.StatusBadRequest)
		return
	}
	if v := r.Header.Get("OC-Total-Length"); v != "" {
		if want, err := strconv.ParseInt(v, 10, 64); err != nil || want != total {
			http.Error(w, fmt.Sprintf("the parts hold %d bytes, OC-Total-Length says %s", total, v), http.StatusBadRequest)
			return
		}
	}
	_, statErr := tree.Stat(dst)
	in, err := c.join(tree, dst, up, transfer, parts)
	if err != nil {
		c.refused(err)
		return
	}
	c.root.RemoveAll(transfer)
	written(w, in, up, statErr == nil)
}

// join writes the parts, in order, as the file dst of tree.
func (c *chunks) join(tree *store.Tree, dst string, up *putInfo, transfer string, parts []string) (store.Info, error) {
	u, err := tree.Create(dst, false)
	if err != nil {
		return store.Info{}, err
	}
	u.SetModTime(up.mtime)
	for _, s := range up.sums {
		u.Expect(s)
	}
	for _, p := range parts {
		f, err := c.root.Open(path.Join(transfer, p))
		if err == nil {
			_, err = io.Copy(u, f)
			f.Close()
		}
		if err != nil {
			u.Abort()
			return store.Info{}, err
		}
	}
	if err := u.Close(); err != nil {
		return store.Info{}, err
	}
	return u.Result(), nil
}

// readDir lists a folder of the chunk root.
func readDir(root *os.Root, name string) ([]fs.FileInfo, error) {
	dir, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return dir.Readdir(-1)
}

// chunkParts lists a transfer's whole parts in order (partBefore) and
// their size.
func chunkParts(root *os.Root, transfer string) ([]string, int64, error) {
	entries, err := readDir(root, transfer)
	if err != nil {
		return nil, 0, err
	}
	var names []string
	var total int64
	for _, e := range entries {
		if e.Mode().IsRegular() && !strings.HasSuffix(e.Name(), partSuffix) {
			names = append(names, e.Name())
			total += e.Size()
		}
	}
	sort.Slice(names, func(i, j int) bool { return partBefore(names[i], names[j]) })
	return names, total, nil
}

// partBefore orders part names: numbers by value, as the iOS app names its
// parts 1, 2... 10 and Android 000001..., the rest by name.
func partBefore(a, b string) bool {
	if isDigits(a) && isDigits(b) {
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			return len(a) < len(b)
		}
	}
	return a < b
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// chunkBytes is what a user's chunk folder holds.
func chunkBytes(root *os.Root) int64 {
	n, _ := store.FilesSize(root.FS(), ".")
	return n
}

// davDestination is the Destination of a request (a path or a URL) as a
// path in user's tree, with the root it was given under.
func davDestination(r *http.Request, user string) (prefix, name string, ok bool) {
	u, err := url.Parse(r.Header.Get("Destination"))
	if err != nil {
		return "", "", false
	}
	if prefix, ok = davRoot(u.Path, user); !ok {
		return "", "", false
	}
	return prefix, path.Clean("/" + norm.NFC.String(strings.TrimPrefix(u.Path, prefix))), true
}

// Package files serves each user's files (package store) over WebDAV (RFC
// 4918, classes 1 and 2) at Prefix, and over the part of the ownCloud and
// Nextcloud protocol their sync clients and rclone's vendors use
// (nextcloud.go, chunked.go). Every method is answered here, on the store:
//
//   - PROPFIND walks the tree from open folders, writing as it goes
//     (propfind.go); PROPPATCH keeps dead properties in an extended
//     attribute of the file, and {DAV:}lastmodified sets its date
//     (deadprops.go);
//   - GET, HEAD, PUT, DELETE, MKCOL, COPY and MOVE (methods.go, copy.go):
//     every write is a store Upload, committed whole or not at all;
//   - LOCK and UNLOCK on the box's lock table, which SFTP honours too
//     (lock.go), the If header (ifheader.go) and the conditional headers
//     (conditions.go), checked under a per-path lock so that a check and
//     its change are one step (pathlock.go).
//
// What sync clients need on top of RFC 4918 is here too: the client's
// modification time (X-OC-Mtime, PROPPATCH lastmodified), checksums
// (OC-Checksum, Content-MD5), strong ETags for files and folders, file
// ids and the oc: properties (props.go).
package files

import (
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/favorites"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/store"
)

// Prefix is where WebDAV lives on the HTTPS server.
const Prefix = "/dav"

// Quotas are the users' quotas in bytes (users.DB), 0 for none.
type Quotas interface {
	Quota(user string) int64
}

// Files is the store as WebDAV uses it: each user's tree (whose whole
// face a DAV server uses), what a public link shares (its owner's file
// or folder, as a tree held to the link's rights), and the folder of
// chunked uploads in progress.
type Files interface {
	Tree(user string) (*store.Tree, error)
	Shared(owner string, id uint64, p string, perm rights.Set) (*store.Tree, error)
	Chunks(user string) (*os.Root, error)
	ExpireChunks()
}

// Handler serves the files.
type Handler struct {
	Store  Files
	Quotas Quotas
	// Favorites are the users' favourite files (oc:favorite); nil: none
	// can be marked.
	Favorites *favorites.Set
	// Capabilities are the other parts' blocks of the OCS capabilities
	// (notifications...), by name.
	Capabilities map[string]any
	// Emails are the users' e-mail addresses (users.DB); nil: none.
	Emails interface{ Email(user string) string }
	// Shares say what each user shared of their files (package shares):
	// oc:share-types. nil: nothing is shared.
	Shares interface {
		Types(user string) map[uint64][]int
	}
	// Locks are the WebDAV locks, which SFTP honours too.
	Locks *locks.Table
	// Memory is the box's budget: a SEARCH draws what its results may
	// hold before it walks (package budget); nil: unbounded.
	Memory *budget.Budget
	Log    *slog.Logger
	// FolderPage, if set, is the web page that shows a folder (p: its
	// path in the user's tree): where a GET of a folder is sent.
	FolderPage func(p string) string
	// Links are the public links, whose WebDAV is served at
	// /public.php/ (links.go), their passwords checked by LinkDoor; nil
	// (either): none is.
	Links    Links
	LinkDoor LinkDoor

	paths pathLocks
}

// Routes mounts WebDAV at Prefix, and the ownCloud and Nextcloud roots
// and endpoints: a user's, but for status.php, the DAV root's OPTIONS and
// a public link's WebDAV (links.go).
func (h *Handler) Routes(rs *front.Routes) {
	for _, p := range []string{Prefix, Prefix + "/", ocWebDAV, ocWebDAV + "/", ncFiles} {
		rs.Handle(auth.User, p, h.serveDAV)
	}
	rs.Handle(auth.User, ncUploads, h.serveUploads)
	for _, p := range []string{ncDAVRoot, ncDAVRoot + "/{$}"} {
		rs.Handle(auth.User, "SEARCH "+p, h.search)
	}
	rs.Public("OPTIONS "+ncDAVRoot, davRootOptions)
	// The Android app's login asks /remote.php/dav without a password and
	// wants to be asked for one: 401, not a redirect to the slash.
	rs.Handle(auth.User, ncDAVRoot, func(w http.ResponseWriter, r *http.Request, _ auth.Caller) {
		http.Redirect(w, r, ncDAVRoot+"/", http.StatusMovedPermanently)
	})
	rs.Handle(auth.User, ncTrashbin, h.serveTrashbin)
	rs.Handle(auth.User, ncVersions, h.serveVersions)
	rs.Public("/status.php", status)
	h.linkRoutes(rs)
	h.cloudRoutes(rs)
	for _, v := range []string{"/ocs/v1.php", "/ocs/v2.php"} {
		rs.Handle(auth.User, v+"/cloud/capabilities", h.ocs(h.capabilities))
		rs.Handle(auth.User, v+"/cloud/user", h.ocs(h.userInfo))
	}
}

// PlainRoutes answers the protocol's paths on the plain-HTTP port with
// the door's refusal (401: passwords are taken over TLS only), rather than
// the redirect to HTTPS a client might follow with its password.
func (h *Handler) PlainRoutes(rs *front.Routes) {
	for _, p := range []string{Prefix, Prefix + "/", "/remote.php/", "/ocs/"} {
		rs.Handle(auth.User, p, h.serveDAV)
	}
	rs.Link("/public.php/", h.serveLink) // a link's token and password, refused likewise
}

// serveDAV answers a WebDAV request on the caller's files.
func (h *Handler) serveDAV(w http.ResponseWriter, r *http.Request, c auth.Caller) {
	prefix, ok := davRoot(r.URL.Path, c.User)
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h.serve(w, r, c.User, prefix)
}

// request is one WebDAV request on a user's tree, reached under prefix;
// name is the path in the tree (in NFC, as the store names files).
type request struct {
	h            *Handler
	w            http.ResponseWriter
	r            *http.Request
	tree         *store.Tree
	user, prefix string
	name         string
	// link: the request comes by a public link (links.go), whose tree is
	// what the link shares and whose user ("link:TOKEN") is no account:
	// it has no favourites, is told no owner, and is shown no web page.
	link bool
}

// favorites are the caller's favourite files; nil: they have none to
// mark (the box keeps none, or the caller comes by a link).
func (q *request) favorites() *favorites.Set {
	if q.link {
		return nil
	}
	return q.h.Favorites
}

// openTree opens user's tree with their quota, or answers 500; the caller
// closes it.
func (h *Handler) openTree(w http.ResponseWriter, r *http.Request, user string) (*store.Tree, bool) {
	tree, err := h.Store.Tree(user)
	if err != nil {
		h.Log.Error("cannot open the files", "user", user, "err", err)
		http.Error(w, "cannot open your files", http.StatusInternalServerError)
		return nil, false
	}
	tree.SetQuota(h.Quotas.Quota(user))
	tree.SetContext(r.Context()) // a digest or a copy stops when the client goes
	return tree, true
}

// serve answers a WebDAV request on user's tree, reached under prefix.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, user, prefix string) {
	tree, ok := h.openTree(w, r, user)
	if !ok {
		return
	}
	defer tree.Close()
	h.answer(&request{h: h, w: w, r: r, tree: tree, user: user, prefix: prefix})
}

// answer answers q, a request on its tree, by its method.
func (h *Handler) answer(q *request) {
	r, w := q.r, q.w
	q.name = norm.NFC.String(strings.TrimPrefix(r.URL.Path, q.prefix))
	switch r.Method {
	case http.MethodOptions:
		q.options()
	case http.MethodGet, http.MethodHead:
		q.get()
	case "PROPFIND":
		q.propfind()
	case "LOCK":
		defer h.paths.lock(q.user, q.name)()
		q.lock()
	case "UNLOCK":
		q.unlock()
	case "REPORT":
		q.report()
	case http.MethodPut, http.MethodDelete, "MKCOL", "PROPPATCH", "COPY", "MOVE":
		q.change()
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// change answers a request that changes the store: its paths locked, the
// locks in its way and its conditional headers checked, then done.
func (q *request) change() {
	r := q.r
	paths := []string{q.name}
	var dst string
	hasDst := r.Method == "MOVE" || r.Method == "COPY"
	if hasDst {
		var ok bool
		if dst, ok = destination(r, q.prefix); !ok {
			http.Error(q.w, "the Destination must be in your files, under "+q.prefix+"/", http.StatusBadRequest)
			return
		}
		paths = append(paths, dst)
	}
	defer q.h.paths.lock(q.user, paths...)()
	_, statErr := q.tree.Stat(q.name)
	var changes []locks.Change
	switch r.Method {
	case http.MethodPut:
		changes = []locks.Change{{Path: q.name, Member: statErr != nil}}
	case http.MethodDelete, "MOVE":
		changes = []locks.Change{{Path: q.name, Tree: true, Member: true}}
	case "MKCOL":
		changes = []locks.Change{{Path: q.name, Member: true}}
	case "PROPPATCH":
		changes = []locks.Change{{Path: q.name}}
	}
	if hasDst {
		changes = append(changes, locks.Change{Path: dst, Tree: true, Member: true})
	}
	if !q.conditions(changes...) {
		return
	}
	switch r.Method {
	case http.MethodPut:
		q.put()
	case http.MethodDelete:
		q.delete()
	case "MKCOL":
		q.mkcol()
	case "PROPPATCH":
		q.proppatch()
	case "COPY", "MOVE":
		q.copyMove(dst)
	}
}

// options answers OPTIONS: the methods the path takes, and the WebDAV
// classes.
func (q *request) options() {
	allow := "OPTIONS, LOCK, PUT, MKCOL"
	if fi, err := q.tree.Stat(q.name); err == nil {
		if fi.IsDir() {
			allow = "OPTIONS, LOCK, DELETE, PROPPATCH, COPY, MOVE, UNLOCK, PROPFIND"
		} else {
			allow = "OPTIONS, LOCK, GET, HEAD, DELETE, PROPPATCH, COPY, MOVE, UNLOCK, PROPFIND, PUT"
		}
	}
	h := q.w.Header()
	h.Set("Allow", allow)
	h.Set("DAV", "1, 2")
	h.Set("MS-Author-Via", "DAV") // Windows' WebDAV client looks for it
}

// destination is the Destination header's path inside the user's tree,
// cleaned and in NFC. Its host is not compared with the request's: behind
// a proxy the two may differ, and the path alone says where.
func destination(r *http.Request, prefix string) (string, bool) {
	u, err := url.Parse(r.Header.Get("Destination"))
	if err != nil || u.Path == "" {
		return "", false
	}
	p, ok := underPrefix(u.Path, prefix)
	if !ok {
		return "", false
	}
	return path.Clean("/" + norm.NFC.String(p)), true
}

// underPrefix is p's part below prefix: "/dav/a" under "/dav" is "/a", but
// "/remote.php/dav/files/alice/x" is not under ".../files/al".
func underPrefix(p, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok || rest != "" && rest[0] != '/' {
		return "", false
	}
	return rest, true
}

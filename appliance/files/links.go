package files

// A public link mounted as a folder: its WebDAV, as Nextcloud serves it
// and rclone, file managers and the apps' "add a public link" reach it.
//
//   - /public.php/webdav, the older root: the link's token is the Basic
//     user name, its password the password (empty for a link without);
//   - /public.php/dav/files/TOKEN, the newer: the token in the path, the
//     password by Basic under any user name, none for a link without.
//
// Either serves what the link shares (the store confines the tree to it
// and holds it to the link's rights: a read-only link refuses every
// change, a drop takes new files and shows nothing) with the same WebDAV
// as a user's files. A link past its expiry, or whose owner is gone, is
// no link. Its password is checked by the login door, under the bans and
// the link's own delay that its page's password has (auth.Door.LinkBasic).

import (
	"net/http"
	"strings"

	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/store"
)

// The roots of a public link's WebDAV.
const (
	linkWebDAV = "/public.php/webdav"
	linkFiles  = "/public.php/dav/files/" // + TOKEN
)

// Links are the public links as their WebDAV asks them (package shares'
// Book).
type Links interface {
	// PublicLink is the live link with token: what it shares, as a
	// mount (its owner, file id, path and rights; no name), and its
	// password's hash ("": none). !ok: no such link, or no longer (past
	// its expiry, its owner's account gone).
	PublicLink(token string) (m store.Mount, hash string, ok bool)
}

// LinkDoor checks a public link's password given over Basic, and answers
// a refused one itself (package auth's Door).
type LinkDoor interface {
	LinkBasic(w http.ResponseWriter, r *http.Request, token, hash string) bool
}

func (h *Handler) linkRoutes(rs *front.Routes) {
	for _, p := range []string{linkWebDAV, linkWebDAV + "/", linkFiles} {
		rs.Link(p, h.serveLink)
	}
}

// serveLink answers a WebDAV request on a public link's share.
func (h *Handler) serveLink(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		http.Error(w, "this is served over HTTPS only", http.StatusUnauthorized)
		return
	}
	token, prefix, byPath := linkRoot(r)
	if h.Links == nil || h.LinkDoor == nil {
		http.NotFound(w, r)
		return
	}
	var m store.Mount
	var hash string
	ok := token != ""
	if ok {
		m, hash, ok = h.Links.PublicLink(token)
	}
	if !ok && byPath {
		http.Error(w, "no such link, or no longer", http.StatusNotFound)
		return
	}
	if !ok {
		token = "" // no live link's: asked again, as a wrong user name is
	}
	if !h.LinkDoor.LinkBasic(w, r, token, hash) {
		return
	}
	tree, err := h.Store.Shared(m.Owner, m.FileID, m.Path, m.Perm)
	if err != nil {
		h.Log.Info("a link's share cannot be opened", "owner", m.Owner, "share", m.ID, "err", err)
		http.Error(w, "what this link shared is no longer there", http.StatusNotFound)
		return
	}
	defer tree.Close()
	tree.SetContext(r.Context())
	h.answer(&request{h: h, w: w, r: r, tree: tree, user: "link:" + token, prefix: prefix, link: true})
}

// linkRoot is the link token r names and the prefix its paths are under:
// /public.php/webdav's, whose token is the Basic user name, or
// /public.php/dav/files/TOKEN's (byPath). "": none named.
func linkRoot(r *http.Request) (token, prefix string, byPath bool) {
	if rest, ok := strings.CutPrefix(r.URL.Path, linkFiles); ok {
		token, _, _ = strings.Cut(rest, "/")
		return token, linkFiles + token, true
	}
	token, _, _ = r.BasicAuth()
	return token, linkWebDAV, false
}

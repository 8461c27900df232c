// Package previewapi answers the preview endpoints of the Nextcloud
// protocol, as its apps and desktop client ask them, with the previews
// package preview makes and keeps.
package previewapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/store"
)

// tree is what a preview request reads of a user's files.
type tree interface {
	Info(p string) (store.Info, error)
	Find(id uint64) (string, store.Info, error)
	Open(p string) (store.File, error)
	Bin() store.Bin
	Close() error
}

// Handler answers the preview endpoints of the Nextcloud protocol.
type Handler struct {
	Maker *preview.Maker
	Log   *slog.Logger
}

// Routes mounts Nextcloud's preview endpoints, as its apps and desktop
// client ask them:
//
//	/index.php/core/preview?fileId=ID&x=W&y=H&a=1      by file id (the apps' grids)
//	/index.php/core/preview.png?file=PATH&x=W&y=H&a=1  by path
//	/index.php/apps/files/api/v1/thumbnail/W/H/PATH    a square, by path
//	/index.php/apps/files_trashbin/preview?fileId=ID   of a trashed file
//
// a=1 keeps the picture's shape; without it the preview is cut square.
func (h *Handler) Routes(rs *front.Routes) {
	rs.Handle(auth.User, "GET /index.php/core/preview", h.byID)
	rs.Handle(auth.User, "GET /index.php/core/preview.png", h.byPath)
	rs.Handle(auth.User, "GET /index.php/apps/files/api/v1/thumbnail/{x}/{y}/{path...}", h.thumbnail)
	rs.Handle(auth.User, "GET /index.php/apps/files_trashbin/preview", h.trashed)
}

// request is a preview request's user, tree and size.
type request struct {
	h      *Handler
	w      http.ResponseWriter
	r      *http.Request
	user   string
	tree   tree
	x, y   int
	square bool
}

// open reads r's size (x and y, 32 if not given, as Nextcloud's
// defaults) and opens user's tree; the caller closes the tree.
func (h *Handler) open(w http.ResponseWriter, r *http.Request, user, x, y string) (*request, bool) {
	q := &request{h: h, w: w, r: r, user: user, x: 32, y: 32}
	var err1, err2 error
	if x != "" {
		q.x, err1 = strconv.Atoi(x)
	}
	if y != "" {
		q.y, err2 = strconv.Atoi(y)
	}
	if err1 != nil || err2 != nil || q.x < 1 || q.y < 1 {
		http.Error(w, "x and y must be positive numbers", http.StatusBadRequest)
		return nil, false
	}
	a := r.FormValue("a")
	q.square = a != "1" && a != "true"
	tree, err := h.Maker.Store.Tree(user)
	if err != nil {
		h.Log.Error("cannot open the files", "user", user, "err", err)
		http.Error(w, "cannot open your files", http.StatusInternalServerError)
		return nil, false
	}
	q.tree = tree
	return q, true
}

func (h *Handler) byID(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	q, ok := h.open(w, r, who.User, r.FormValue("x"), r.FormValue("y"))
	if !ok {
		return
	}
	defer q.tree.Close()
	id, err := strconv.ParseUint(r.FormValue("fileId"), 10, 64)
	if err != nil {
		http.Error(w, "fileId must be a file's id", http.StatusBadRequest)
		return
	}
	p, in, err := q.tree.Find(id)
	if err != nil || in.IsDir() {
		http.Error(w, "no such file", http.StatusNotFound)
		return
	}
	q.send(p, in)
}

func (h *Handler) byPath(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	q, ok := h.open(w, r, who.User, r.FormValue("x"), r.FormValue("y"))
	if !ok {
		return
	}
	defer q.tree.Close()
	p := r.FormValue("file")
	in, err := q.tree.Info(p)
	if err != nil || in.IsDir() {
		http.Error(w, "no such file", http.StatusNotFound)
		return
	}
	q.send(p, in)
}

// thumbnail answers the files app's thumbnail call: square, errors as
// JSON messages.
func (h *Handler) thumbnail(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	x, err1 := strconv.Atoi(r.PathValue("x"))
	y, err2 := strconv.Atoi(r.PathValue("y"))
	if err1 != nil || err2 != nil || x < 1 || y < 1 {
		jsonError(w, http.StatusBadRequest, "Requested size must be numeric and a positive value.")
		return
	}
	q, ok := h.open(w, r, who.User, strconv.Itoa(x), strconv.Itoa(y))
	if !ok {
		return
	}
	defer q.tree.Close()
	q.square = true
	p := r.PathValue("path")
	in, err := q.tree.Info(p)
	if err != nil || in.IsDir() {
		jsonError(w, http.StatusNotFound, "File not found.")
		return
	}
	q.send(p, in)
}

func (h *Handler) trashed(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	q, ok := h.open(w, r, who.User, r.FormValue("x"), r.FormValue("y"))
	if !ok {
		return
	}
	defer q.tree.Close()
	id, err := strconv.ParseUint(r.FormValue("fileId"), 10, 64)
	if err != nil {
		http.Error(w, "fileId must be a file's id", http.StatusBadRequest)
		return
	}
	items, err := q.tree.Bin().Items()
	if err != nil {
		http.Error(w, "cannot read the trash", http.StatusInternalServerError)
		return
	}
	for _, it := range items {
		if it.FileID == id && it.Kind == store.KindDeleted && !it.Dir {
			q.deliver(preview.Source{User: q.user, ID: id, Version: it.ETag,
				Open: func() (io.ReadSeekCloser, error) { return q.tree.Bin().Open(it.ID) }})
			return
		}
	}
	http.Error(w, "no such file in the trash", http.StatusNotFound)
}

// send answers with the preview of the file p, described by in.
func (q *request) send(p string, in store.Info) {
	if !filetype.Previewable(p) {
		http.Error(q.w, "no preview for this kind of file", http.StatusNotFound)
		return
	}
	q.deliver(preview.Source{User: q.user, ID: in.FileID, Version: in.ETag,
		Open: func() (io.ReadSeekCloser, error) { return q.tree.Open(p) }})
}

func (q *request) deliver(src preview.Source) {
	q.h.Maker.Serve(q.w, q.r, src, q.x, q.y, q.square)
}

func jsonError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"message": msg}) // dropped: strings always encode; the client may be gone
}

package files

// The rest of the Nextcloud API the apps and the desktop client call at
// login and on their main screens: the user by name, the avatar, and the
// unified search of file names.

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/avatar"
	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/ocs"
	"github.com/bonesync/bonesync/appliance/store"
)

// cloudRoutes mounts what this file answers.
func (h *Handler) cloudRoutes(rs *front.Routes) {
	for _, v := range []string{"/ocs/v1.php", "/ocs/v2.php"} {
		rs.Handle(auth.User, "GET "+v+"/cloud/users/{user}", h.cloudUser)
	}
	rs.Handle(auth.User, "GET /ocs/v2.php/search/providers", h.searchProviders)
	rs.Handle(auth.User, "GET /ocs/v2.php/search/providers/{provider}/search", h.unifiedSearch)
	rs.Handle(auth.User, "GET /index.php/avatar/{user}/{size}", h.avatar)
	rs.Handle(auth.User, "GET /index.php/avatar/{user}/{size}/dark", h.avatar)
}

// cloudUser answers cloud/users/USER for the user themself (the iOS app
// asks it at login); another user, as to one who is no admin, does not
// exist.
func (h *Handler) cloudUser(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	if r.PathValue("user") != user {
		ocs.Error(w, r, http.StatusNotFound, "User does not exist")
		return
	}
	ocs.Write(w, r, h.userInfo(user))
}

// avatar answers a user's picture: drawn from the name (package avatar),
// as Nextcloud draws one for an account that set none.
func (h *Handler) avatar(w http.ResponseWriter, r *http.Request, _ auth.Caller) {
	name := r.PathValue("user")
	size, err := strconv.Atoi(r.PathValue("size"))
	if err != nil || size < 1 {
		http.Error(w, "the size is a number of pixels", http.StatusBadRequest)
		return
	}
	size = min(size, avatar.MaxSize)
	tag := fmt.Sprintf(`"%s-%d-1"`, url.PathEscape(name), size)
	w.Header().Set("ETag", tag)
	w.Header().Set("Cache-Control", "private, max-age=86400")
	w.Header().Set("X-NC-IsCustomAvatar", "0")
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	b, err := avatar.PNG(name, size)
	if err != nil {
		h.Log.Error("cannot draw an avatar", "err", err)
		http.Error(w, "cannot draw the picture", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(b)
}

// searchProviders lists the unified search's providers: the files' names.
func (h *Handler) searchProviders(w http.ResponseWriter, r *http.Request, _ auth.Caller) {
	ocs.Write(w, r, []map[string]any{{"id": "files", "appId": "files", "name": "Files", "order": 5, "triggers": []string{"files"}, "filters": map[string]any{}}})
}

// unifiedSearch finds the files and folders whose names hold the term,
// newest first, a page at a time (cursor: how many came before).
func (h *Handler) unifiedSearch(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	if r.PathValue("provider") != "files" {
		ocs.Error(w, r, http.StatusNotFound, "no such search provider")
		return
	}
	term := strings.TrimSpace(r.FormValue("term"))
	limit, _ := strconv.Atoi(r.FormValue("limit"))
	limit = min(max(limit, 1), 100)
	if r.FormValue("limit") == "" {
		limit = 5
	}
	cursor, _ := strconv.Atoi(r.FormValue("cursor"))
	cursor = max(cursor, 0)
	q, ok := h.open(w, r, user, ncFiles+user, "/")
	if !ok {
		return
	}
	defer q.tree.Close()
	entries := []map[string]any{}
	if term != "" {
		s := nameSearch(term, limit)
		all, _, err := q.find(s, cursor)
		if err != nil {
			ocs.Error(w, r, http.StatusInternalServerError, "cannot search your files")
			return
		}
		for _, f := range all {
			id := strconv.FormatUint(f.in.FileID, 10)
			thumb := ""
			if !f.in.IsDir() && filetype.Previewable(f.p) {
				thumb = "/index.php/core/preview?x=32&y=32&fileId=" + id
			}
			entries = append(entries, map[string]any{
				"thumbnailUrl": thumb, "title": path.Base(f.p), "subline": "in " + path.Dir(f.p),
				"resourceUrl": "/index.php/f/" + id, "icon": iconOf(f.in.IsDir()), "rounded": false,
				"attributes": map[string]any{"fileId": id, "path": f.p},
			})
		}
	}
	ocs.Write(w, r, map[string]any{"name": "Files", "isPaginated": true, "entries": entries, "cursor": cursor + len(entries)})
}

func iconOf(dir bool) string {
	if dir {
		return "icon-folder"
	}
	return "icon-filetype-file"
}

// FindByName finds the files and folders below under whose names hold
// term (without regard to case), newest first, at most limit of them:
// the unified search's, and the web pages' search (a method, so the pages
// ask the handler the server gives them rather than this package).
func (*Handler) FindByName(tree *store.Tree, under, term string, limit int) ([]string, []store.Info, error) {
	q := &request{h: &Handler{}, tree: tree, name: under}
	all, _, err := q.find(nameSearch(term, limit), 0)
	paths := make([]string, len(all))
	infos := make([]store.Info, len(all))
	for i, f := range all {
		paths[i], infos[i] = f.p, f.in
	}
	return paths, infos, err
}

// nameSearch is the search of names holding term, newest first.
func nameSearch(term string, limit int) davxml.Search {
	pattern := "%" + strings.NewReplacer("%", "", "_", "").Replace(strings.TrimSpace(term)) + "%"
	return davxml.Search{Depth: -1, Limit: limit,
		Where: &davxml.Cond{Op: "like", Prop: davxml.Name("displayname"), Literal: pattern},
		Order: []davxml.Order{{Prop: davxml.Name("getlastmodified"), Descending: true}}}
}

package shareapi

// The OCS files_sharing API, as the Nextcloud apps' and the desktop
// client's share menus call it (/ocs/v2.php/apps/files_sharing/api/v1/):
// list, get, create, update and delete shares, and search for users to
// share with. The Android app reads the answers as XML, the iOS app as
// JSON (package ocs says which).

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/ocs"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/users"
)

// Directory lists the users one may share with.
type Directory interface {
	List() ([]users.Info, error)
}

// API serves the files_sharing API.
type API struct {
	Book  *shares.Book
	Store shares.Files
	Users Directory
	Log   *slog.Logger
}

const apiPrefix = "/apps/files_sharing/api/v1"

// Capabilities are what the sharing API says of itself (files_sharing):
// shares with users and public links, with passwords, expiry, uploads and
// drops; no groups, no mail, no federation, no resharing.
var Capabilities = map[string]any{"files_sharing": map[string]any{
	"api_enabled": true, "resharing": false, "group_sharing": false, "default_permissions": 31,
	"public": map[string]any{
		"enabled": true, "multiple_links": true, "send_mail": false, "upload": true, "upload_files_drop": true,
		"password":             map[string]any{"enforced": false, "askForOptionalPassword": false},
		"expire_date":          map[string]any{"enabled": true, "enforced": false},
		"expire_date_internal": map[string]any{"enabled": true, "enforced": false},
		"expire_date_remote":   map[string]any{"enabled": false},
	},
	"user":       map[string]any{"send_mail": false, "expire_date": map[string]any{"enabled": true}},
	"group":      map[string]any{"enabled": false, "expire_date": map[string]any{"enabled": false}},
	"federation": map[string]any{"outgoing": false, "incoming": false, "expire_date": map[string]any{"enabled": false}, "expire_date_supported": map[string]any{"enabled": false}},
	"sharee":     map[string]any{"query_lookup_default": false, "always_show_unique": true},
}}

// Routes mounts the API, v1 and v2.
func (a *API) Routes(rs *front.Routes) {
	for _, v := range []string{"/ocs/v1.php", "/ocs/v2.php"} {
		p := v + apiPrefix
		rs.Handle(auth.User, "GET "+p+"/shares", a.list)
		rs.Handle(auth.User, "POST "+p+"/shares", a.create)
		rs.Handle(auth.User, "GET "+p+"/shares/{id}", a.get)
		rs.Handle(auth.User, "PUT "+p+"/shares/{id}", a.update)
		rs.Handle(auth.User, "DELETE "+p+"/shares/{id}", a.remove)
		rs.Handle(auth.User, "GET "+p+"/sharees", a.sharees)
	}
}

// format is a share as the API says it, to user (its owner or its
// recipient).
func (a *API) format(r *http.Request, user string, s shares.Share) map[string]any {
	out := map[string]any{
		"id": strconv.Itoa(s.ID), "share_type": s.Type, "uid_owner": s.Owner, "displayname_owner": s.Owner,
		"uid_file_owner": s.Owner, "displayname_file_owner": s.Owner,
		"permissions": s.Perm, "can_edit": s.Owner == user, "can_delete": true,
		"stime": s.Created.Unix(), "parent": nil, "expiration": nil, "token": nil,
		"note": s.Note, "label": s.Label, "hide_download": boolInt(s.Hide), "mail_send": 0,
		"item_type": s.Item, "item_source": s.FileID, "file_source": s.FileID, "file_parent": 0,
		"storage_id": "home::" + s.Owner, "storage": 1, "share_with": nil, "share_with_displayname": nil,
		"attributes": nil, "is-mount-root": false, "mount-type": "", "has_preview": false,
	}
	if !s.Expires.IsZero() {
		out["expiration"] = s.Expires.Add(-time.Second).Local().Format("2006-01-02") + " 00:00:00" // the last day
	}
	p := s.Path
	if s.With == user && s.Mount != "" {
		p = "/" + s.Mount // as the recipient sees it
		out["mount-type"] = "shared"
	}
	out["path"], out["file_target"] = p, "/"+path.Base(p)
	switch s.Item {
	case shares.ItemFolder:
		out["mimetype"] = "httpd/unix-directory"
	case shares.ItemFile:
		out["mimetype"] = filetype.Of(s.Path)
		out["has_preview"] = filetype.Previewable(s.Path)
	default:
		out["mimetype"] = "text/" + s.Item
	}
	switch s.Type {
	case shares.TypeUser:
		out["share_with"], out["share_with_displayname"], out["share_with_displayname_unique"] = s.With, s.With, s.With
	case shares.TypeLink:
		out["token"] = s.Token
		out["url"] = "https://" + r.Host + shares.LinkPath(s.Token)
		out["share_with_displayname"] = "(Shared link)"
		if s.Hash != "" {
			out["password"], out["share_with"] = s.Hash, s.Hash
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// list answers GET shares: the user's, or those of one path (and what is
// in it: subfiles), or those shared with them.
func (a *API) list(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	q := r.URL.Query()
	var all []shares.Share
	switch {
	case q.Get("shared_with_me") == "true":
		all = a.Book.With(user)
	case q.Get("path") != "":
		p := "/" + strings.Trim(q.Get("path"), "/")
		tree, err := a.Store.Tree(user)
		if err != nil {
			ocs.Error(w, r, http.StatusInternalServerError, "cannot open your files")
			return
		}
		_, err = tree.Info(p)
		tree.Close()
		if err != nil {
			ocs.Error(w, r, http.StatusNotFound, "Wrong path, file/folder does not exist")
			return
		}
		sub := q.Get("subfiles") == "true"
		for _, s := range a.Book.By(user) {
			if s.Path == p || sub && path.Dir(s.Path) == p {
				all = append(all, s)
			}
		}
	default:
		all = a.Book.By(user)
	}
	out := make([]map[string]any, 0, len(all))
	for _, s := range all {
		if s.Item == shares.ItemFile || s.Item == shares.ItemFolder {
			out = append(out, a.format(r, user, s))
		}
	}
	ocs.Write(w, r, out)
}

func (a *API) shareOf(w http.ResponseWriter, r *http.Request, user string) (shares.Share, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err == nil {
		if s, err := a.Book.Get(user, id); err == nil {
			return s, true
		}
	}
	ocs.Error(w, r, http.StatusNotFound, "Wrong share ID, share does not exist")
	return shares.Share{}, false
}

func (a *API) get(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	if s, ok := a.shareOf(w, r, user); ok {
		ocs.Write(w, r, []any{a.format(r, user, s)}) // a list of one, as Nextcloud answers
	}
}

// params reads a request's parameters: a form (the iOS app, the POSTs),
// or a JSON object (the Android app's updates), into strings.
func params(r *http.Request) (url.Values, error) {
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		if len(strings.TrimSpace(string(b))) > 0 {
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, err
			}
		}
		v := url.Values{}
		for k, x := range m {
			switch x := x.(type) {
			case string:
				v.Set(k, x)
			case float64:
				v.Set(k, strconv.FormatFloat(x, 'f', -1, 64))
			case bool:
				v.Set(k, strconv.FormatBool(x))
			}
		}
		return v, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	return r.Form, nil
}

// expiry reads expireDate ("YYYY-MM-DD", or a date and time); "" is none.
// A share lasts to the end of that day.
func expiry(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02 15:04:05", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			y, m, d := t.Date()
			return time.Date(y, m, d+1, 0, 0, 0, 0, time.Local).UTC(), nil
		}
	}
	return time.Time{}, errors.New("expireDate is a date: YYYY-MM-DD")
}

func (a *API) create(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	v, err := params(r)
	if err != nil {
		ocs.Error(w, r, http.StatusBadRequest, "cannot read the request")
		return
	}
	req := shares.Request{Path: v.Get("path"), With: v.Get("shareWith"), Password: v.Get("password"), Note: v.Get("note"), Label: v.Get("label"),
		Upload: v.Get("publicUpload") == "true"}
	if req.Type, err = strconv.Atoi(v.Get("shareType")); err != nil {
		ocs.Error(w, r, http.StatusBadRequest, "shareType is a number: 0 for a user, 3 for a link")
		return
	}
	if p := v.Get("permissions"); p != "" {
		if req.Perm, err = strconv.Atoi(p); err != nil || req.Perm < 0 {
			ocs.Error(w, r, http.StatusBadRequest, "permissions is a number")
			return
		}
	}
	if req.Expires, err = expiry(v.Get("expireDate")); err != nil {
		ocs.Error(w, r, http.StatusBadRequest, err.Error())
		return
	}
	s, err := a.Book.Add(user, req)
	switch {
	case errors.Is(err, shares.ErrNotKept):
		a.Log.Error("share not kept", "user", user, "err", err)
		ocs.Error(w, r, http.StatusInternalServerError, err.Error())
		return
	case errors.Is(err, fs.ErrNotExist):
		ocs.Error(w, r, http.StatusNotFound, "Wrong path, file/folder does not exist")
		return
	case err != nil:
		ocs.Error(w, r, http.StatusBadRequest, err.Error())
		return
	}
	a.Log.Info("shared", "user", user, "id", s.ID, "path", s.Path, "type", s.Type, "with", s.With, "perm", s.Perm)
	ocs.Write(w, r, a.format(r, user, s))
}

func (a *API) update(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	s, ok := a.shareOf(w, r, user)
	if !ok {
		return
	}
	if s.Owner != user {
		ocs.Error(w, r, http.StatusForbidden, "only the owner changes a share")
		return
	}
	v, err := params(r)
	if err != nil {
		ocs.Error(w, r, http.StatusBadRequest, "cannot read the request")
		return
	}
	var c shares.Change
	if p := v.Get("permissions"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			ocs.Error(w, r, http.StatusBadRequest, "permissions is a number")
			return
		}
		c.Perm = &n
	}
	if v.Has("publicUpload") && s.Type == shares.TypeLink && s.Item == shares.ItemFolder {
		n := int(rights.Read)
		if v.Get("publicUpload") == "true" {
			n = int(rights.Read | rights.Update | rights.Create | rights.Delete)
		}
		c.Perm = &n
	}
	for key, dst := range map[string]**string{"password": &c.Password, "note": &c.Note, "label": &c.Label} {
		if v.Has(key) {
			x := v.Get(key)
			*dst = &x
		}
	}
	if v.Has("expireDate") {
		t, err := expiry(v.Get("expireDate"))
		if err != nil {
			ocs.Error(w, r, http.StatusBadRequest, err.Error())
			return
		}
		c.Expires = &t
	}
	if v.Has("hideDownload") {
		h := v.Get("hideDownload") == "true" || v.Get("hideDownload") == "1"
		c.Hide = &h
	}
	if s, err = a.Book.Update(user, s.ID, c); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, shares.ErrNotKept) {
			code = http.StatusInternalServerError
			a.Log.Error("share change not kept", "user", user, "err", err)
		}
		ocs.Error(w, r, code, err.Error())
		return
	}
	ocs.Write(w, r, a.format(r, user, s))
}

func (a *API) remove(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	s, ok := a.shareOf(w, r, user)
	if !ok {
		return
	}
	if err := a.Book.Remove(user, s.ID); err != nil {
		ocs.Error(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	ocs.Write(w, r, []any{})
}

// sharees answers the search for whom to share with: the box's users.
func (a *API) sharees(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	term := strings.ToLower(strings.TrimSpace(r.FormValue("search")))
	list, err := a.Users.List()
	if err != nil {
		ocs.Error(w, r, http.StatusInternalServerError, "cannot list the users")
		return
	}
	exact, found := []any{}, []any{}
	for _, u := range list {
		if u.Name == user || !strings.Contains(strings.ToLower(u.Name), term) {
			continue
		}
		e := map[string]any{"label": u.Name, "icon": "icon-user", "shareWithDisplayNameUnique": u.Name,
			"value": map[string]any{"shareType": shares.TypeUser, "shareWith": u.Name}}
		if strings.ToLower(u.Name) == term {
			exact = append(exact, e)
		} else {
			found = append(found, e)
		}
	}
	empty := func() []any { return []any{} }
	ocs.Write(w, r, map[string]any{
		"exact": map[string]any{"users": exact, "groups": empty(), "remotes": empty(), "remote_groups": empty(),
			"emails": empty(), "circles": empty(), "rooms": empty(), "lookup": empty()},
		"users": found, "groups": empty(), "remotes": empty(), "remote_groups": empty(), "emails": empty(),
		"circles": empty(), "rooms": empty(), "lookup": empty(), "lookupEnabled": false,
	})
}

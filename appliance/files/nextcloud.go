package files

// The part of the ownCloud/Nextcloud server protocol that their sync
// clients (and rclone's owncloud and nextcloud vendors) need: status.php,
// the OCS capabilities and user endpoints, the WebDAV roots under
// remote.php, and chunked uploads (chunked.go). All of it sits on the same
// store and the same login as /dav/.

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/ocs"
	"github.com/bonesync/bonesync/appliance/users"
)

// The WebDAV roots the clients use, besides Prefix.
const (
	ocWebDAV     = "/remote.php/webdav"
	ncFiles      = "/remote.php/dav/files/"   // + USER
	ncUploads    = "/remote.php/dav/uploads/" // + USER
	serverPretty = "bonesync"
)

// davRoot is the prefix under which urlPath reaches user's files: /dav,
// /remote.php/webdav, or /remote.php/dav/files/USER (another user's is
// refused).
func davRoot(urlPath, user string) (string, bool) {
	for _, p := range []string{Prefix, ocWebDAV} {
		if urlPath == p || strings.HasPrefix(urlPath, p+"/") {
			return p, true
		}
	}
	if rest, ok := strings.CutPrefix(urlPath, ncFiles); ok {
		name, _, _ := strings.Cut(rest, "/")
		if name == user {
			return ncFiles + user, true
		}
	}
	return "", false
}

// The Nextcloud release whose protocol this follows. The clients read it
// to decide what the server can do, and warn about one they take for
// unsupported: the Android app below 31 (end of life), the desktop client
// below 20, the iOS app at 17 or less.
const (
	versionMajor, versionMinor, versionMicro = 33, 0, 2
	versionString                            = "33.0.2"
)

func status(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{
		"installed": true, "maintenance": false, "needsDbUpgrade": false,
		"version": versionString + ".1", "versionstring": versionString, "edition": "",
		"productname": serverPretty, "extendedSupport": false,
	})
}

// capabilities say what is implemented, and nothing else: a client
// trusts them. The apps read some keys as required once their block is
// there (core.pollinterval, files.bigfilechunking, files_sharing's
// resharing and public.enabled).
func (h *Handler) capabilities(string) any {
	caps := map[string]any{
		"version": map[string]any{"major": versionMajor, "minor": versionMinor, "micro": versionMicro,
			"string": versionString, "edition": "", "extendedSupport": false},
		"capabilities": map[string]any{
			"core": map[string]any{"pollinterval": 60, "webdav-root": "remote.php/webdav", "mod-rewrite-working": false},
			"dav":  map[string]any{"chunking": "1.0"},
			"checksums": map[string]any{
				"supportedTypes":      []string{"SHA1", "MD5", "ADLER32"},
				"preferredUploadType": "SHA1",
			},
			"files": map[string]any{
				"bigfilechunking": true,
				// The trash and versions, over DAV (trashbin.go); versions
				// are deleted, not labelled.
				"undelete": true, "delete_from_trash": true,
				"versioning": true, "version_deletion": true, "version_labeling": false,
				// What the store refuses in a name (store.Clean), besides
				// "/" and control characters.
				"forbidden_filename_characters": []string{"\\"},
				"forbidden_filenames":           []string{}, "forbidden_filename_basenames": []string{},
				"forbidden_filename_extensions": []string{}, "windows_compatible_filenames": false,
			},
			// Sharing is not built: this is the block a Nextcloud server
			// with sharing turned off sends.
			"files_sharing": map[string]any{"api_enabled": false, "public": map[string]any{"enabled": false},
				"user": map[string]any{"send_mail": false}, "resharing": false},
		},
	}
	for k, v := range h.Capabilities {
		caps["capabilities"].(map[string]any)[k] = v
	}
	return caps
}

// ocs answers an OCS API call for the logged-in user (package ocs).
func (h *Handler) ocs(data func(user string) any) front.Handler {
	return func(w http.ResponseWriter, r *http.Request, c auth.Caller) {
		ocs.Write(w, r, data(c.User))
	}
}

// userInfo is the OCS user record, with the quota as Nextcloud reports it
// (-3: no quota but the disk).
func (h *Handler) userInfo(user string) any {
	groups := []string{}
	if user == users.Admin {
		groups = append(groups, "admin")
	}
	// What the iOS app reads of a user (cloud/users/USER), with the values
	// a Nextcloud account that has set nothing has.
	var email any // null, as for an account without one
	if h.Emails != nil {
		if e := h.Emails.Email(user); e != "" {
			email = e
		}
	}
	info := map[string]any{"id": user, "display-name": user, "displayname": user, "email": email, "enabled": true,
		"groups": groups, "subadmin": []string{}, "backend": "Database",
		"backendCapabilities": map[string]any{"setDisplayName": false, "setPassword": true},
		"language":            "en", "locale": "", "lastLogin": 0, "storageLocation": "",
		"address": "", "phone": "", "website": "", "twitter": "", "organisation": ""}
	tree, err := h.Store.Tree(user)
	if err != nil {
		return info
	}
	defer tree.Close()
	q := h.Quotas.Quota(user)
	tree.SetQuota(q)
	used, err1 := tree.Usage()
	free, err2 := tree.Free()
	if err1 != nil || err2 != nil {
		return info
	}
	quota := map[string]any{"used": used, "free": free, "total": used + free, "quota": -3}
	if q > 0 {
		quota["free"] = max(0, min(free, q-used))
		quota["total"], quota["quota"] = q, q
	}
	if total := quota["total"].(int64); total > 0 {
		quota["relative"] = float64(used) * 100 / float64(total)
	}
	info["quota"] = quota
	return info
}

// writeJSON answers v in JSON whole, or a 500 if it cannot be encoded
// (never half an answer).
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "the answer could not be encoded", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(append(b, '\n'))
}

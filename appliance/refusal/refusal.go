// Package refusal is what a client over HTTP is told when the store
// refuses a change: the status and the words, the same from WebDAV
// (package files) and the web pages (package webui), which share it
// through this leaf rather than through each other.
package refusal

import (
	"errors"
	"io/fs"
	"net/http"

	"github.com/bonesync/bonesync/appliance/store"
)

// Status is the HTTP status and the words a change the store refused is
// answered with: 507 for a full disk or quota, 400 for a bad name or
// checksum, 404, 409, and 403 for the rest.
func Status(err error) (int, string) {
	switch {
	case errors.Is(err, store.ErrNoSpace):
		return http.StatusInsufficientStorage, "the box's disk is full"
	case errors.Is(err, store.ErrQuota):
		return http.StatusInsufficientStorage, err.Error()
	case errors.Is(err, store.ErrChecksum), errors.Is(err, store.ErrBadName):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound, "not found"
	case errors.Is(err, fs.ErrExist):
		return http.StatusConflict, "exists"
	}
	return http.StatusForbidden, "refused"
}

// Write answers a request whose change the store refused (see Status).
func Write(w http.ResponseWriter, err error) {
	code, msg := Status(err)
	http.Error(w, msg, code)
}

package webui

import (
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/refusal"
	"github.com/bonesync/bonesync/appliance/store"
)

type trashData struct {
	Items  []store.TrashItem
	Of     string // the file whose versions are shown; "": the whole trash
	Keep   string // how long items are kept
	Size   int64
	Folder string // the page of Of's folder
}

// trashPage lists what was deleted and the files' earlier versions, newest
// first; ?path=P shows only P's versions.
func (u *Files) trashPage(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	u.showTrash(w, r, sess, http.StatusOK, "", "")
}

func (u *Files) showTrash(w http.ResponseWriter, r *http.Request, sess auth.Caller, code int, flash, problem string) {
	p := u.base(sess, "Trash", "trash")
	p.Flash, p.Problem = flash, problem
	tree, ok := openTree(w, u.Log, u.Store, u.Users, sess)
	if !ok {
		return
	}
	defer tree.Close()
	d := trashData{Of: r.FormValue("path"), Keep: keepFor(u.Store.TrashKeep())}
	var items []store.TrashItem
	var err error
	if d.Of != "" {
		d.Of = "/" + strings.TrimPrefix(d.Of, "/")
		items, err = tree.Bin().Versions(d.Of)
		d.Folder = (&url.URL{Path: FilesPrefix + path.Dir(d.Of)}).EscapedPath()
		d.Folder = strings.TrimSuffix(d.Folder, "/") + "/"
		p.Title = "Versions of " + path.Base(d.Of)
	} else {
		items, err = tree.Bin().Items()
	}
	if err != nil && p.Problem == "" {
		p.Problem = "The trash cannot be read: " + err.Error()
	}
	for i := range items {
		d.Size += items[i].Size
		items[i].Path = "/" + strings.TrimPrefix(items[i].Path, "/") // as the file pages name it
	}
	d.Items = items
	p.Data = d
	u.render(w, code, "trash", p)
}

func keepFor(d time.Duration) string {
	switch days := int(d.Hours() / 24); {
	case d <= 0:
		return ""
	case days <= 1:
		return "1 day"
	default:
		return strconv.Itoa(days) + " days"
	}
}

// trashPost restores or deletes an item, or empties the trash.
func (u *Files) trashPost(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	tree, ok := openTree(w, u.Log, u.Store, u.Users, sess)
	if !ok {
		return
	}
	defer tree.Close()
	id := r.PostFormValue("id")
	switch r.PostFormValue("action") {
	case "restore":
		// A version takes the place of the file there, which Restore
		// keeps as a version in turn: the owner is told, so that newer
		// work (perhaps just synced) is not thought lost.
		to, displaced, err := tree.Bin().Restore(id)
		if err != nil {
			u.showTrash(w, r, sess, status(err), "", "Not restored: "+storeMessage(err))
			return
		}
		to = "/" + strings.TrimPrefix(to, "/")
		u.Log.Info("web: restored from the trash", "user", sess.User, "path", to)
		msg := "Restored to " + to + "."
		if displaced {
			msg += " The file that was there is now in the trash as an earlier version."
		}
		u.showTrash(w, r, sess, http.StatusOK, msg, "")
	case "delete":
		if err := tree.Bin().Delete(id); err != nil {
			u.showTrash(w, r, sess, status(err), "", "Not deleted: "+storeMessage(err))
			return
		}
		u.showTrash(w, r, sess, http.StatusOK, "Deleted for good.", "")
	case "empty":
		if err := tree.Bin().Empty(""); err != nil {
			u.showTrash(w, r, sess, http.StatusInternalServerError, "", "The trash was not emptied: "+err.Error())
			return
		}
		u.showTrash(w, r, sess, http.StatusOK, "The trash is empty.", "")
	default:
		http.Error(w, "unknown action", http.StatusBadRequest)
	}
}

// trashItem downloads a trashed file, to look at before restoring it.
func (u *Files) trashItem(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	tree, ok := openTree(w, u.Log, u.Store, u.Users, who)
	if !ok {
		return
	}
	defer tree.Close()
	f, err := tree.Bin().Open(r.PathValue("id"))
	if errors.Is(err, syscall.EISDIR) {
		http.Error(w, "a folder in the trash is restored, not downloaded", http.StatusBadRequest)
		return
	}
	if err != nil {
		refusal.Write(w, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		refusal.Write(w, err)
		return
	}
	name := path.Base(r.URL.Query().Get("name"))
	if name == "." || name == "/" {
		name = "file"
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	http.ServeContent(w, r, "", fi.ModTime(), f)
}

func status(err error) int {
	code, _ := refusal.Status(err)
	return code
}

func storeMessage(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "it is no longer in the trash."
	case errors.Is(err, store.ErrNoSpace):
		return "the box's disk is full."
	}
	return err.Error()
}

package webui

// The owner's view of sharing (/shares): every share and link they made,
// each revoked with one button (at once: the store asks the book at each
// use), what others share with them, which they may leave, and the form
// that shares a file or folder (/shares?path=P, from the file's row on the
// Files page) or a calendar or address book. Files and folders come first,
// then calendars and address books; each link has its QR code and a
// button that copies it (app.js).

import (
	"errors"
	"html/template"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/shares"
)

type shareRow struct {
	ID                int
	What, Item        string
	With, URL         string
	Rights            string
	Password, Expired bool
	Expires           time.Time
	Href              string        // the item's page
	QR                template.HTML // a link's, as a QR code
}

// shareSection is one kind of share on the page, files and folders or
// calendars and address books: what the user shares, what others share
// with them.
type shareSection struct {
	Files    bool // files and folders; else calendars and address books
	By, With []shareRow
}

type sharesData struct {
	Path     string // the file or folder to share, from ?path=
	Dir      bool
	Sections []shareSection // files and folders first
	Users    []string
	NewLink  string // a link just made
	NewQR    template.HTML
	// The calendars and address books the user may share.
	Calendars []string
	AddrBooks []string
}

func rightsText(s shares.Share) string {
	p := rights.Set(s.Perm)
	switch {
	case p&rights.Read == 0:
		return "send only (a drop)"
	case p&(rights.Update|rights.Create|rights.Delete) != 0:
		return "read and change"
	}
	return "read"
}

func (u *Sharing) sharesPage(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	u.showShares(w, r, sess, http.StatusOK, "", "", "")
}

func (u *Sharing) showShares(w http.ResponseWriter, r *http.Request, sess auth.Caller, code int, flash, problem, newLink string) {
	p := u.base(sess, "Sharing", "shares")
	p.Flash, p.Problem = flash, problem
	d := sharesData{NewLink: newLink}
	if u.Shares == nil {
		p.Problem = "Sharing is off on this box."
		p.Data = d
		u.render(w, code, "shares", p)
		return
	}
	if newLink != "" {
		d.NewQR = u.linkQR(newLink, "the new link")
	}
	if q := r.FormValue("path"); q != "" {
		d.Path = path.Clean("/" + q)
		if tree, ok := openTree(w, u.Log, u.Store, u.Users, sess); ok {
			in, err := tree.Info(d.Path)
			tree.Close()
			if err != nil {
				p.Problem, d.Path = "There is no "+d.Path+" in your files.", ""
			} else {
				d.Dir = in.IsDir()
			}
		}
	}
	if list, err := u.Users.List(); err == nil {
		for _, a := range list {
			if a.Name != sess.User {
				d.Users = append(d.Users, a.Name)
			}
		}
	}
	if u.Collections != nil {
		d.Calendars, d.AddrBooks = u.Collections(sess.User)
	}
	files, colls := u.sections(r, sess.User)
	d.Sections = []shareSection{files}
	if len(d.Calendars)+len(d.AddrBooks)+len(colls.By)+len(colls.With) > 0 {
		d.Sections = append(d.Sections, colls)
	}
	p.Data = d
	u.render(w, code, "shares", p)
}

// sections are the user's shares and those with them, files and folders
// apart from calendars and address books.
func (u *Sharing) sections(r *http.Request, user string) (files, colls shareSection) {
	files.Files = true
	now := time.Now()
	for _, s := range u.Shares.By(user) {
		row := shareRow{ID: s.ID, What: s.Path, Item: s.Item, Rights: rightsText(s), Password: s.Hash != "",
			Expires: s.Expires, Expired: s.Expired(now)}
		if !s.Expires.IsZero() {
			row.Expires = s.Expires.Add(-time.Second) // its last day
		}
		switch s.Type {
		case shares.TypeUser:
			row.With = s.With
		case shares.TypeLink:
			row.URL = "https://" + r.Host + shares.LinkPath(s.Token)
			row.QR = u.linkQR(row.URL, "the link to "+s.Path)
		}
		if s.Item == shares.ItemFile || s.Item == shares.ItemFolder {
			row.Href = FolderURL(path.Dir(s.Path))
			files.By = append(files.By, row)
		} else {
			colls.By = append(colls.By, row)
		}
	}
	for _, s := range u.Shares.With(user) {
		name := s.Mount
		if name == "" {
			name = s.Path
		}
		row := shareRow{ID: s.ID, What: name, Item: s.Item, With: s.Owner, Rights: rightsText(s), Href: FolderURL("/")}
		if s.Item == shares.ItemFile || s.Item == shares.ItemFolder {
			files.With = append(files.With, row)
		} else {
			colls.With = append(colls.With, row)
		}
	}
	return files, colls
}

// linkQR is a link as a QR code for a phone to scan, as the Nextcloud
// apps show one; none, logged, if the link is too long for a code.
func (u *Sharing) linkQR(link, what string) template.HTML {
	svg, err := qrSVG(link, "QR code of "+what)
	if err != nil {
		u.Log.Warn("web: no QR code for a link", "bytes", len(link), "err", err) // the link itself is a key
	}
	return svg
}

// sharesPost makes, revokes or leaves a share.
func (u *Sharing) sharesPost(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	if u.Shares == nil {
		http.NotFound(w, r)
		return
	}
	id, _ := strconv.Atoi(r.PostFormValue("id"))
	switch r.PostFormValue("action") {
	case "revoke", "leave":
		if err := u.Shares.Remove(sess.User, id); err != nil {
			u.showShares(w, r, sess, http.StatusNotFound, "", "Nothing was ended: "+err.Error(), "")
			return
		}
		u.Log.Info("web: share ended", "user", sess.User, "id", id)
		u.showShares(w, r, sess, http.StatusOK, "The share is ended.", "", "")
	case "add":
		req := shares.Request{Path: r.PostFormValue("path"), With: r.PostFormValue("with"), Password: r.PostFormValue("password")}
		if item, name, ok := strings.Cut(r.PostFormValue("collection"), "/"); ok && (item == shares.ItemCalendar || item == shares.ItemAddressBook) {
			req.Item, req.Path = item, name
		}
		switch r.PostFormValue("rights") {
		case "change":
			req.Perm = int(rights.Read | rights.Update | rights.Create | rights.Delete)
		case "drop":
			req.Perm = int(rights.Create)
		default:
			req.Perm = int(rights.Read)
		}
		req.Type = shares.TypeUser
		if req.With == "*link" || r.PostFormValue("kind") == "link" {
			req.Type, req.With = shares.TypeLink, ""
		}
		if e := strings.TrimSpace(r.PostFormValue("expires")); e != "" {
			t, err := time.ParseInLocation("2006-01-02", e, time.Local)
			if err != nil {
				u.showShares(w, r, sess, http.StatusBadRequest, "", "The expiry is a date.", "")
				return
			}
			req.Expires = t.AddDate(0, 0, 1).UTC() // to the end of that day
		}
		s, err := u.Shares.Add(sess.User, req)
		if err != nil {
			code := http.StatusBadRequest
			if errors.Is(err, shares.ErrNotKept) {
				code = http.StatusInternalServerError
				u.Log.Error("web: share not kept", "user", sess.User, "err", err)
			}
			u.showShares(w, r, sess, code, "", "Not shared: "+err.Error(), "")
			return
		}
		u.Log.Info("web: shared", "user", sess.User, "id", s.ID, "path", s.Path, "type", s.Type, "with", s.With)
		if s.Type == shares.TypeLink {
			u.showShares(w, r, sess, http.StatusOK, "The link is made.", "", "https://"+r.Host+shares.LinkPath(s.Token))
			return
		}
		u.showShares(w, r, sess, http.StatusOK, "Shared with "+s.With+".", "", "")
	default:
		http.Error(w, "unknown action", http.StatusBadRequest)
	}
}

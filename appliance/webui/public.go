package webui

// A public link's pages (/index.php/s/TOKEN, and /s/TOKEN): for anyone
// with the link, no account. A file is shown and downloaded; a folder is
// listed (pictures as a gallery) and downloaded, whole as a zip or file by
// file; a link that takes uploads has an upload form, and a drop has
// nothing else (what is in it stays unseen). A link with a password asks
// it first, under the bans every login has. The pages name nothing of the
// box beyond the shared item: no owner, no path above it, no menu.

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/refusal"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/store"
)

// linkFor is how long a link's password, once given, holds in a browser.
const linkFor = 12 * time.Hour

// linkVisits remembers the browsers that gave a link's password: a
// cookie per link, with a token that also guards its forms. A visit holds
// for the password it was given under: a new password, or one set on a
// link that had none, asks every browser again.
type linkVisits struct {
	mu sync.Mutex
	m  map[string]linkVisit // token + "/" + visit
}

type linkVisit struct {
	until time.Time
	hash  string // the link's password hash then ("": none)
}

// maxVisits bounds the visits remembered. Visits to links without a
// password cost nothing to make, so they are the ones dropped when it is
// reached; visits that gave a password (which the ban policy slows) stay.
const maxVisits = 10000

func (v *linkVisits) open(token, hash string) string {
	visit := auth.RandomToken()
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[string]linkVisit{}
	}
	if len(v.m) >= maxVisits {
		for k, e := range v.m {
			if !now.Before(e.until) || e.hash == "" {
				delete(v.m, k)
			}
		}
	}
	if len(v.m) >= maxVisits && hash == "" {
		return visit // not remembered: its forms ask for a new visit
	}
	v.m[token+"/"+visit] = linkVisit{until: now.Add(linkFor), hash: hash}
	return visit
}

func (v *linkVisits) valid(token, visit, hash string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.m[token+"/"+visit]
	return ok && time.Now().Before(e.until) && e.hash == hash
}

func linkCookie(token string) string { return "link_" + token }

type publicData struct {
	Token, Base string // the link's page, "/index.php/s/TOKEN"
	Name        string // the shared item's name
	Dir         bool
	Path        string // shown within the share: "/", "/sub/"
	Crumbs      []crumb
	Rows        []publicRow
	Pictures    []publicRow
	Size        int64
	Modified    time.Time
	Read        bool // may list and download
	Upload      bool // takes uploads
	Hide        bool // no download button
	Visit       string
	Note        string
	Picture     string // a shared file's preview
	Locked      bool   // asks the password
	Uploaded    int
}

type publicRow struct {
	Name, Href, Download, Thumb string
	Dir                         bool
	Size                        int64
	Modified                    time.Time
}

func (u *Public) publicRoutes(rs *front.Routes) {
	for _, base := range []string{"/index.php/s/{token}", "/s/{token}"} {
		rs.Link("GET "+base, u.publicPage)
		rs.Link("POST "+base, u.publicPassword)
		rs.Link("GET "+base+"/download", u.publicDownload)
		rs.Link("GET "+base+"/preview", u.publicPreview)
		rs.Link("POST "+base+"/upload", u.publicUpload)
	}
}

// link is the live link r names and its tree, if the browser may use it;
// otherwise it answers (404 for no such link, the password form) and
// returns false. The caller closes the tree.
func (u *Public) link(w http.ResponseWriter, r *http.Request) (shares.Share, *store.Tree, string, bool) {
	if u.Shares == nil {
		http.NotFound(w, r)
		return shares.Share{}, nil, "", false
	}
	token := r.PathValue("token")
	s, ok := u.Shares.Link(token)
	if !ok {
		u.render(w, http.StatusNotFound, "message", page{Title: "Not found", Problem: "This link does not exist, or no longer does."})
		return s, nil, "", false
	}
	visit := ""
	if c, err := r.Cookie(linkCookie(token)); err == nil && u.links.valid(token, c.Value, s.Hash) {
		visit = c.Value
	}
	if s.Hash != "" && visit == "" {
		u.passwordForm(w, http.StatusUnauthorized, s, "")
		return s, nil, "", false
	}
	tree, err := u.Store.Shared(s.Owner, s.FileID, s.Path, rights.Set(s.Perm))
	if err != nil {
		u.render(w, http.StatusNotFound, "message", page{Title: "Not found", Problem: "What this link shared is no longer there."})
		return s, nil, "", false
	}
	if visit == "" { // no password: a visit for the forms' token
		visit = u.links.open(token, s.Hash)
		u.setLinkCookie(w, s, visit)
	}
	return s, tree, visit, true
}

func (u *Public) setLinkCookie(w http.ResponseWriter, s shares.Share, visit string) {
	http.SetCookie(w, &http.Cookie{Name: linkCookie(s.Token), Value: visit, Path: "/", MaxAge: int(linkFor / time.Second),
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

func (u *Public) passwordForm(w http.ResponseWriter, code int, s shares.Share, problem string) {
	u.render(w, code, "public", page{Title: "Protected", Problem: problem,
		Data: publicData{Token: s.Token, Base: shares.LinkPath(s.Token), Locked: true}})
}

// publicPassword takes a link's password.
func (u *Public) publicPassword(w http.ResponseWriter, r *http.Request) {
	if u.Shares == nil {
		http.NotFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	s, ok := u.Shares.Link(r.PathValue("token"))
	if !ok || s.Hash == "" {
		http.NotFound(w, r)
		return
	}
	addr := guard.Host(r.RemoteAddr)
	switch res := u.WaysIn.LinkPassword(addr, s.Token, s.Hash, r.PostFormValue("password")); res {
	case auth.OK:
		u.setLinkCookie(w, s, u.links.open(s.Token, s.Hash))
		http.Redirect(w, r, shares.LinkPath(s.Token), http.StatusSeeOther)
	default:
		if res.Status() == http.StatusTooManyRequests {
			auth.SetRetryAfter(w, u.WaysIn.LinkRetryAfter(addr, s.Token))
		}
		u.passwordForm(w, res.Status(), s, res.Message())
	}
}

// inShare is the path ?path= names within the share, cleaned ("/" its
// top).
func inShare(r *http.Request) string { return path.Clean("/" + r.FormValue("path")) }

func (u *Public) publicPage(w http.ResponseWriter, r *http.Request) {
	s, tree, visit, ok := u.link(w, r)
	if !ok {
		return
	}
	defer tree.Close()
	perm := rights.Set(s.Perm)
	d := publicData{Token: s.Token, Base: shares.LinkPath(s.Token), Name: path.Base(s.Path), Dir: s.Item == shares.ItemFolder,
		Read: perm&rights.Read != 0, Upload: perm&rights.Create != 0, Hide: s.Hide, Visit: visit, Note: s.Note}
	d.Uploaded, _ = strconv.Atoi(r.FormValue("uploaded"))
	p := page{Title: d.Name, Data: &d}
	if !d.Read { // a drop: nothing to see
		u.render(w, http.StatusOK, "public", p)
		return
	}
	if !d.Dir {
		in, err := tree.Info("/")
		if err != nil {
			http.NotFound(w, r)
			return
		}
		d.Size, d.Modified = in.Size(), in.ModTime()
		if filetype.Previewable(d.Name) {
			d.Picture = d.Base + "/preview?s=1024&fit=1"
		}
		u.render(w, http.StatusOK, "public", p)
		return
	}
	d.Path = strings.TrimSuffix(inShare(r), "/") + "/"
	entries, err := tree.ReadDir(d.Path)
	if err != nil {
		u.render(w, http.StatusNotFound, "message", page{Title: "Not found", Problem: "There is no such folder in this share."})
		return
	}
	d.Crumbs = []crumb{{d.Name, d.Base}}
	acc := ""
	for _, part := range strings.Split(strings.Trim(d.Path, "/"), "/") {
		if part != "" {
			acc += "/" + part
			d.Crumbs = append(d.Crumbs, crumb{part, d.Base + "?path=" + url.QueryEscape(acc)})
		}
	}
	for _, e := range entries {
		if !e.IsDir() && !e.Mode().IsRegular() {
			continue
		}
		sub := path.Join(d.Path, e.Name())
		row := publicRow{Name: e.Name(), Dir: e.IsDir(), Size: e.Size(), Modified: e.ModTime(),
			Download: d.Base + "/download?path=" + url.QueryEscape(sub)}
		if row.Dir {
			row.Href = d.Base + "?path=" + url.QueryEscape(sub)
		} else if filetype.Previewable(e.Name()) && u.Previews != nil {
			row.Thumb = d.Base + "/preview?s=256&path=" + url.QueryEscape(sub)
			row.Href = d.Base + "/preview?s=1024&fit=1&path=" + url.QueryEscape(sub)
			d.Pictures = append(d.Pictures, row)
		}
		d.Rows = append(d.Rows, row)
	}
	sort.Slice(d.Rows, func(i, j int) bool {
		if d.Rows[i].Dir != d.Rows[j].Dir {
			return d.Rows[i].Dir
		}
		return strings.ToLower(d.Rows[i].Name) < strings.ToLower(d.Rows[j].Name)
	})
	u.render(w, http.StatusOK, "public", p)
}

// publicDownload sends a file of the share, or a folder of it as a zip.
func (u *Public) publicDownload(w http.ResponseWriter, r *http.Request) {
	s, tree, _, ok := u.link(w, r)
	if !ok {
		return
	}
	defer tree.Close()
	if rights.Set(s.Perm)&rights.Read == 0 {
		http.Error(w, "this link takes uploads only", http.StatusForbidden)
		return
	}
	p := inShare(r)
	in, err := tree.Info(p)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	name := path.Base(s.Path)
	if p != "/" {
		name = path.Base(p)
	}
	if in.IsDir() {
		zipFolder(w, r, u.Log, tree, p, name) // "Trip.zip" of Trip/, not "files.zip"
		return
	}
	sendFile(w, r, tree, p, name, in, false)
}

// publicPreview sends a picture's preview.
func (u *Public) publicPreview(w http.ResponseWriter, r *http.Request) {
	s, tree, _, ok := u.link(w, r)
	if !ok {
		return
	}
	defer tree.Close()
	p := inShare(r)
	name := s.Path
	if p != "/" {
		name = p
	}
	in, err := tree.Info(p)
	if err != nil || in.IsDir() || u.Previews == nil || !filetype.Previewable(name) || rights.Set(s.Perm)&rights.Read == 0 {
		http.NotFound(w, r)
		return
	}
	side, _ := strconv.Atoi(r.FormValue("s"))
	side = min(max(side, 32), 1024)
	u.Previews.Serve(w, r, preview.Source{User: s.Owner, ID: in.FileID, Version: in.ETag,
		Open: func() (io.ReadSeekCloser, error) { return tree.Open(p) }}, side, side, r.FormValue("fit") == "")
}

// publicUpload takes files into the share (?path= a folder of it), each
// under a name not yet taken there: "a.jpg", else "a (2).jpg"... The
// form's visit token must be the browser's.
func (u *Public) publicUpload(w http.ResponseWriter, r *http.Request) {
	s, tree, visit, ok := u.link(w, r)
	if !ok {
		return
	}
	defer tree.Close()
	if rights.Set(s.Perm)&rights.Create == 0 || s.Item != shares.ItemFolder {
		http.Error(w, "this link takes no uploads", http.StatusForbidden)
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		http.Error(w, "send the files as a form (multipart/form-data)", http.StatusBadRequest)
		return
	}
	dir := inShare(r)
	if rights.Set(s.Perm)&rights.Read == 0 {
		dir = "/" // a drop: its top only, so that no name inside can be probed
	}
	n := 0
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			http.Error(w, "the upload was cut short", http.StatusBadRequest)
			return
		}
		if part.FormName() == "visit" {
			b, _ := io.ReadAll(io.LimitReader(part, 100))
			if subtle.ConstantTimeCompare(b, []byte(visit)) != 1 {
				http.Error(w, "refused: the form did not come from this link's page", http.StatusForbidden)
				return
			}
			visit = "" // checked: the files may come
			continue
		}
		if part.FormName() != "files" || part.FileName() == "" {
			continue
		}
		if visit != "" {
			http.Error(w, "refused: the form's token must come before the files", http.StatusForbidden)
			return
		}
		name, err := freeUploadName(tree, dir, path.Base(strings.ReplaceAll(part.FileName(), "\\", "/")))
		if err == nil {
			err = writeAll(tree, name, part)
		}
		if err != nil {
			code, msg := refusal.Status(err)
			http.Error(w, fmt.Sprintf("%s: %s", part.FileName(), msg), code)
			return
		}
		u.Log.Info("web: a file came by a public link", "owner", s.Owner, "share", s.ID, "name", name)
		n++
	}
	http.Redirect(w, r, shares.LinkPath(s.Token)+"?uploaded="+strconv.Itoa(n)+"&path="+url.QueryEscape(dir), http.StatusSeeOther)
}

// freeUploadName is name in dir, or "name (2).ext"... if that is taken
// (seen without reading the folder: a drop cannot).
func freeUploadName(tree fileTree, dir, name string) (string, error) {
	if name == "" || name == "." || name == ".." {
		return "", fs.ErrInvalid
	}
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i < 1000; i++ {
		try := name
		if i > 1 {
			try = fmt.Sprintf("%s (%d)%s", stem, i, ext)
		}
		u, err := tree.Create(path.Join(dir, try), false)
		if errors.Is(err, fs.ErrPermission) {
			continue // there, and this link may not replace it
		}
		if err != nil {
			return "", err
		}
		u.Abort()
		if _, err := tree.Lstat(path.Join(dir, try)); err == nil {
			continue // there (a link that may replace files still adds)
		}
		return path.Join(dir, try), nil
	}
	return "", fs.ErrExist
}

func writeAll(tree fileTree, name string, r io.Reader) error {
	up, err := tree.Create(name, false)
	if err != nil {
		return err
	}
	if _, err := io.Copy(up, r); err != nil {
		up.Abort()
		return err
	}
	return up.Close()
}

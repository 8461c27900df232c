package webui

// The pictures: thumbnails in the file list, the photos page (every
// picture, newest taken first, a month at a heading), the search of names,
// the notices at the top of the pages, and Nextcloud's links to a file by
// id (/index.php/f/ID, which its apps and mails hand out).

import (
	"io"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/store"
)

// photosPerPage is how many thumbnails the photos page shows at a time.
const photosPerPage = 120

// ThumbURL is the web pages' thumbnail of the file p: side pixels, square
// or (fit) the picture's shape.
func ThumbURL(p string, side int, fit bool) string {
	u := (&url.URL{Path: "/thumb" + path.Clean("/"+p)}).EscapedPath() + "?s=" + strconv.Itoa(side)
	if fit {
		u += "&fit=1"
	}
	return u
}

// thumb serves /thumb/PATH: the file's preview (package preview), for the
// session's user.
func (u *Photos) thumb(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	tree, ok := openTree(w, u.Log, u.Store, u.Users, sess)
	if !ok {
		return
	}
	defer tree.Close()
	name := "/" + r.PathValue("path")
	in, err := tree.Info(name)
	if err != nil || in.IsDir() || u.Previews == nil || !filetype.Previewable(name) {
		http.NotFound(w, r)
		return
	}
	side, _ := strconv.Atoi(r.FormValue("s"))
	side = min(max(side, 32), 1024)
	square := r.FormValue("fit") == ""
	u.Previews.Serve(w, r, preview.Source{User: sess.User, ID: in.FileID, Version: in.ETag,
		Open: func() (io.ReadSeekCloser, error) { return tree.Open(name) }}, side, side, square)
}

// photo is one thumbnail of the photos page.
type photo struct {
	Name, View, Thumb string
	Taken             time.Time
}

type month struct {
	Title  string
	Photos []photo
}

type photosData struct {
	Months     []month
	Total      int
	Page, Last int
}

// photos serves /photos: every picture in the user's files, newest taken
// first (the EXIF date, or the file's own), a month at a heading.
func (u *Photos) photos(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	tree, ok := openTree(w, u.Log, u.Store, u.Users, sess)
	if !ok {
		return
	}
	defer tree.Close()
	type pic struct {
		p  string
		in store.Info
	}
	var pics []pic
	tree.Walk("/", func(p string, in store.Info) error {
		if !in.IsDir() && filetype.Previewable(p) {
			pics = append(pics, pic{p, in})
		}
		return nil
	})
	when := make([]time.Time, len(pics))
	if u.Previews != nil {
		srcs := make([]preview.Source, len(pics))
		for i, pc := range pics {
			pc := pc
			srcs[i] = preview.Source{User: sess.User, ID: pc.in.FileID, Version: pc.in.ETag,
				Open: func() (io.ReadSeekCloser, error) { return tree.Open(pc.p) }}
		}
		when = u.Previews.Taken(sess.User, srcs)
	}
	for i := range when {
		if when[i].IsZero() {
			when[i] = pics[i].in.ModTime()
		}
	}
	order := make([]int, len(pics))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return when[order[a]].After(when[order[b]]) })
	d := photosData{Total: len(pics)}
	d.Last = max(1, (len(pics)+photosPerPage-1)/photosPerPage)
	d.Page, _ = strconv.Atoi(r.FormValue("page"))
	d.Page = min(max(d.Page, 1), d.Last)
	from := (d.Page - 1) * photosPerPage
	for _, i := range order[from:min(from+photosPerPage, len(order))] {
		t := when[i].Local()
		title := t.Format("January 2006")
		if len(d.Months) == 0 || d.Months[len(d.Months)-1].Title != title {
			d.Months = append(d.Months, month{Title: title})
		}
		m := &d.Months[len(d.Months)-1]
		p := pics[i].p
		m.Photos = append(m.Photos, photo{Name: path.Base(p), Taken: when[i],
			View: (&url.URL{Path: FilesPrefix + p}).EscapedPath() + "?view", Thumb: ThumbURL(p, 256, false)})
	}
	pg := u.base(sess, "Photos", "photos")
	pg.Data = d
	u.render(w, http.StatusOK, "photos", pg)
}

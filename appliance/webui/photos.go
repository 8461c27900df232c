package webui

// The pictures: thumbnails in the file list, the photos page (every
// picture, newest taken first, a month at a heading), the search of names,
// the notices at the top of the pages, and Nextcloud's links to a file by
// id (/index.php/f/ID, which its apps and mails hand out).

import (
	"github.com/bonesync/bonesync/appliance/auth"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/files"
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
	tag := `"` + in.ETag + "." + strconv.Itoa(side) + "." + strconv.FormatBool(square) + `"`
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	p, err := u.Previews.Get(r.Context(), preview.Source{User: sess.User, ID: in.FileID, Version: in.ETag,
		Open: func() (*os.File, error) { return tree.Open(name) }}, side, side, square)
	if err != nil {
		if budget.Answer(w, err, http.StatusInsufficientStorage) {
			return
		}
		if !preview.NoPreview(err) {
			u.Log.Warn("web: no thumbnail", "user", sess.User, "path", name, "err", err)
		}
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", p.Type)
	h.Set("ETag", tag)
	h.Set("Cache-Control", "private, max-age=86400")
	w.Write(p.Data)
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
				Open: func() (*os.File, error) { return tree.Open(pc.p) }}
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

// hit is one search result.
type hit struct {
	Name, Folder, Href, FolderHref string
	Dir                            bool
	Size                           int64
	Modified                       time.Time
}

type searchData struct {
	Query string
	Hits  []hit
	More  bool
}

// searchLimit is how many results the search page shows.
const searchLimit = 200

// search serves /search?q=TERM: the files and folders whose names hold
// the term, newest first.
func (u *Files) search(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	tree, ok := openTree(w, u.Log, u.Store, u.Users, sess)
	if !ok {
		return
	}
	defer tree.Close()
	d := searchData{Query: strings.TrimSpace(r.FormValue("q"))}
	pg := u.base(sess, "Search", "files")
	if d.Query != "" {
		paths, infos, err := files.FindByName(tree, "/", d.Query, searchLimit+1)
		if err != nil {
			pg.Problem = "The search failed: " + err.Error()
		}
		d.More = len(paths) > searchLimit
		for i, p := range paths[:min(len(paths), searchLimit)] {
			h := hit{Name: path.Base(p), Folder: path.Dir(p), Dir: infos[i].IsDir(), Size: infos[i].Size(), Modified: infos[i].ModTime(),
				FolderHref: FolderURL(path.Dir(p))}
			if h.Dir {
				h.Href, h.Size = FolderURL(p), infos[i].TreeSize
			} else {
				h.Href = (&url.URL{Path: FilesPrefix + p}).EscapedPath()
				if previewKind(p) != "" {
					h.Href += "?view"
				}
			}
			d.Hits = append(d.Hits, h)
		}
		pg.Title = "Search: " + d.Query
	}
	pg.Data = d
	u.render(w, http.StatusOK, "search", pg)
}

// byID serves /index.php/f/ID: the folder, or the file's page.
func (u *Files) byID(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	tree, ok := openTree(w, u.Log, u.Store, u.Users, who)
	if !ok {
		return
	}
	defer tree.Close()
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	var p string
	var in store.Info
	if err == nil {
		p, in, err = tree.Find(id)
	}
	if err != nil {
		http.Redirect(w, r, FilesPrefix+"/", http.StatusSeeOther)
		return
	}
	if in.IsDir() {
		http.Redirect(w, r, FolderURL(p), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, (&url.URL{Path: FilesPrefix + p}).EscapedPath()+"?view", http.StatusSeeOther)
}

// dismiss takes a notice (id, or all) off the user's pages, and goes back.
func (u *Common) dismiss(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	if u.Notices != nil {
		id, _ := strconv.Atoi(r.FormValue("id"))
		if _, err := u.Notices.Dismiss(sess.User, id); err != nil {
			u.Log.Warn("web: cannot dismiss a notice", "user", sess.User, "err", err)
		}
	}
	// Back to the page it was on (the change check made sure the
	// request came from this box's page).
	back := FilesPrefix + "/"
	if ref, err := url.Parse(r.Referer()); err == nil && strings.HasPrefix(ref.Path, "/") && !strings.HasPrefix(ref.Path, "//") {
		back = (&url.URL{Path: ref.Path, RawQuery: ref.RawQuery}).String()
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

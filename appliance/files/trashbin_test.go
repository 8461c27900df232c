package files

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/store"
)

// muxed answers r through the handler's routes, as the server mounts them.
func muxed(h *Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	routes(h).ServeHTTP(w, r)
	return w
}

// must answers r and fails unless the status is want.
func must(t *testing.T, h *Handler, want int, r *http.Request) string {
	t.Helper()
	w := muxed(h, r)
	if w.Code != want {
		t.Fatalf("%s %s = %d %q, want %d", r.Method, r.URL.Path, w.Code, w.Body.String(), want)
	}
	return w.Body.String()
}

func first(t *testing.T, re, s string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in %s", re, s)
	}
	return m[1]
}

const trashProps = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:nc="http://nextcloud.org/ns" xmlns:oc="http://owncloud.org/ns"><d:prop>
<nc:trashbin-filename/><nc:trashbin-original-location/><nc:trashbin-deletion-time/><d:getcontentlength/><d:resourcetype/><oc:fileid/><oc:size/><nc:has-preview/><nc:no-such/></d:prop></d:propfind>`

func TestTrashbinOverDAV(t *testing.T) {
	h := newDAV(t, 0)
	h.Store.(*store.Store).SetTrashPolicy(30*24*time.Hour, 0)
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/files/note.txt", "remember me"))
	must(t, h, 204, davRequest("DELETE", "/remote.php/dav/files/u/files/note.txt", ""))

	list := must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/trashbin/u/trash", trashProps, "Depth", "1"))
	for _, want := range []string{
		"<nc:trashbin-filename>note.txt</nc:trashbin-filename>",
		"<nc:trashbin-original-location>files/note.txt</nc:trashbin-original-location>",
		"<d:getcontentlength>11</d:getcontentlength>", "<oc:size>11</oc:size>", "<nc:has-preview>false</nc:has-preview>",
		"<nc:no-such/>", // asked for and missing: 404 propstat
	} {
		if !strings.Contains(list, want) {
			t.Errorf("trash listing lacks %s:\n%s", want, list)
		}
	}
	if when, _ := strconv.ParseInt(first(t, `<nc:trashbin-deletion-time>(\d+)<`, list), 10, 64); time.Since(time.Unix(when, 0)).Abs() > time.Minute {
		t.Errorf("deletion time %d, want about now", when)
	}
	href := first(t, `<d:href>(/remote.php/dav/trashbin/u/trash/note\.txt\.d[^<]+)</d:href>`, list)
	if got := must(t, h, 200, davRequest("GET", href, "")); got != "remember me" {
		t.Errorf("GET of the trashed file = %q", got)
	}
	// Restoring: MOVE to restore/NAME.
	name := href[strings.LastIndex(href, "/")+1:]
	must(t, h, 403, davRequest("MOVE", href, "", "Destination", "https://box/remote.php/dav/files/u/elsewhere.txt"))
	must(t, h, 201, davRequest("MOVE", href, "", "Destination", "https://box/remote.php/dav/trashbin/u/restore/"+name))
	if got := must(t, h, 200, davRequest("GET", "/remote.php/dav/files/u/files/note.txt", "")); got != "remember me" {
		t.Errorf("restored file = %q", got)
	}
	must(t, h, 404, davRequest("GET", href, ""))

	// Deleted again, then deleted for good; and the whole trash emptied.
	must(t, h, 204, davRequest("DELETE", "/remote.php/dav/files/u/files/note.txt", ""))
	list = must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/trashbin/u/trash", trashProps, "Depth", "1"))
	href = first(t, `<d:href>(/remote.php/dav/trashbin/u/trash/note\.txt\.d[^<]+)</d:href>`, list)
	must(t, h, 204, davRequest("DELETE", href, ""))
	must(t, h, 204, davRequest("DELETE", "/remote.php/dav/files/u/files", ""))
	must(t, h, 204, davRequest("DELETE", "/remote.php/dav/trashbin/u/trash", ""))
	list = must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/trashbin/u/trash", trashProps, "Depth", "1"))
	if strings.Count(list, "<d:response>") != 1 {
		t.Errorf("after emptying, the trash lists:\n%s", list)
	}
	// Another user's trash is not reachable.
	must(t, h, 404, davRequest("PROPFIND", "/remote.php/dav/trashbin/other/trash", trashProps, "Depth", "1"))
}

const versionProps = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><d:getcontentlength/><d:getlastmodified/><oc:fileid/></d:prop></d:propfind>`

func TestVersionsOverDAV(t *testing.T) {
	h := newDAV(t, 0)
	h.Store.(*store.Store).SetTrashPolicy(30*24*time.Hour, 0)
	file := "/remote.php/dav/files/u/files/doc.txt"
	must(t, h, 201, davRequest("PUT", file, "first draft", "X-OC-Mtime", "1600000000"))
	must(t, h, 204, davRequest("PUT", file, "second", "X-OC-Mtime", "1700000000"))
	// The file is renamed: its versions follow it.
	must(t, h, 201, davRequest("MOVE", file, "", "Destination", "https://box/remote.php/dav/files/u/files/final.txt"))
	file = "/remote.php/dav/files/u/files/final.txt"
	id := first(t, `<oc:fileid>(\d+)</oc:fileid>`, must(t, h, 207, davRequest("PROPFIND", file, versionProps, "Depth", "0")))

	list := must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/versions/u/versions/"+id, versionProps, "Depth", "1"))
	if n := strings.Count(list, "<d:response>"); n != 2 {
		t.Fatalf("versions of %s: %d responses, want the collection and one version:\n%s", id, n, list)
	}
	if !strings.Contains(list, "<d:getcontentlength>11</d:getcontentlength>") || !strings.Contains(list, "Sun, 13 Sep 2020 12:26:40 GMT") {
		t.Errorf("the version lacks its size or date:\n%s", list)
	}
	href := first(t, `<d:href>(/remote.php/dav/versions/u/versions/`+id+`/[^<]+)</d:href>`, list)
	if got := must(t, h, 200, davRequest("GET", href, "")); got != "first draft" {
		t.Errorf("GET of the version = %q", got)
	}
	must(t, h, 201, davRequest("MOVE", href, "", "Destination", "https://box/remote.php/dav/versions/u/restore/target"))
	if got := must(t, h, 200, davRequest("GET", file, "")); got != "first draft" {
		t.Errorf("after the restore the file holds %q", got)
	}
	// What it replaced is a version in turn, which can be deleted.
	list = must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/versions/u/versions/"+id, versionProps, "Depth", "1"))
	href = first(t, `<d:href>(/remote.php/dav/versions/u/versions/`+id+`/[^<]+)</d:href>`, list)
	if got := must(t, h, 200, davRequest("GET", href, "")); got != "second" {
		t.Errorf("the displaced content = %q", got)
	}
	// Emptying the trash of deleted files keeps the versions.
	must(t, h, 204, davRequest("DELETE", "/remote.php/dav/trashbin/u/trash", ""))
	must(t, h, 200, davRequest("GET", href, ""))
	must(t, h, 204, davRequest("DELETE", href, ""))
	list = must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/versions/u/versions/"+id, versionProps, "Depth", "1"))
	if n := strings.Count(list, "<d:response>"); n != 1 {
		t.Errorf("after DELETE, %d responses:\n%s", n, list)
	}
	must(t, h, 404, davRequest("PROPFIND", "/remote.php/dav/versions/u/versions/12345", versionProps, "Depth", "1"))
	must(t, h, 404, davRequest("PROPFIND", "/remote.php/dav/versions/u/versions/abc", versionProps, "Depth", "1"))
}

func TestTrashedFolderIsListed(t *testing.T) {
	h := newDAV(t, 0)
	h.Store.(*store.Store).SetTrashPolicy(30*24*time.Hour, 0)
	must(t, h, 201, davRequest("MKCOL", "/remote.php/dav/files/u/trip", ""))
	must(t, h, 201, davRequest("MKCOL", "/remote.php/dav/files/u/trip/day1", ""))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/trip/day1/a.jpg", "jpeg bytes"))
	must(t, h, 204, davRequest("DELETE", "/remote.php/dav/files/u/trip", ""))
	list := must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/trashbin/u/trash", trashProps, "Depth", "1"))
	folder := first(t, `<d:href>(/remote.php/dav/trashbin/u/trash/trip\.d[^<]+/)</d:href>`, list)
	if !strings.Contains(list, "<oc:size>10</oc:size>") {
		t.Errorf("the trashed folder's size is not what it holds:\n%s", list)
	}
	inner := must(t, h, 207, davRequest("PROPFIND", folder+"day1", trashProps, "Depth", "1"))
	for _, want := range []string{
		"<d:href>" + folder + "day1/a.jpg</d:href>",
		"<nc:trashbin-original-location>trip/day1/a.jpg</nc:trashbin-original-location>",
	} {
		if !strings.Contains(inner, want) {
			t.Errorf("the listing of day1 lacks %s:\n%s", want, inner)
		}
	}
	if got := must(t, h, 200, davRequest("GET", folder+"day1/a.jpg", "")); got != "jpeg bytes" {
		t.Errorf("GET in a trashed folder = %q", got)
	}
	must(t, h, 403, davRequest("DELETE", folder+"day1/a.jpg", ""))
	must(t, h, 404, davRequest("GET", folder+"nothing", ""))
}

func TestHasPreview(t *testing.T) {
	h := newDAV(t, 0)
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/files/cat.JPG", "not really a jpeg"))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/files/notes.txt", "notes"))
	body := `<d:propfind xmlns:d="DAV:" xmlns:nc="http://nextcloud.org/ns"><d:prop><nc:has-preview/></d:prop></d:propfind>`
	list := must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/files/u/files/", body, "Depth", "1"))
	for _, want := range []string{
		"<d:href>/remote.php/dav/files/u/files/</d:href><d:propstat><d:prop><nc:has-preview>false</nc:has-preview>",
		"<d:href>/remote.php/dav/files/u/files/cat.JPG</d:href><d:propstat><d:prop><nc:has-preview>true</nc:has-preview>",
		"<d:href>/remote.php/dav/files/u/files/notes.txt</d:href><d:propstat><d:prop><nc:has-preview>false</nc:has-preview>",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("listing lacks %s:\n%s", want, list)
		}
	}
}

package files

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The Android app's photos view (android-library's SearchRemoteOperation,
// as its GallerySearchTask sends it).
const androidGallery = `<?xml version="1.0" encoding="UTF-8"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://nextcloud.com/ns"><d:basicsearch>
<d:select><d:prop><oc:fileid xmlns:oc="http://owncloud.org/ns"/><d:getcontenttype/><d:getlastmodified/><d:resourcetype/><oc:favorite xmlns:oc="http://owncloud.org/ns"/><nc:has-preview xmlns:nc="http://nextcloud.org/ns"/></d:prop></d:select>
<d:from><d:scope><d:href>/files/u</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where><d:and>
 <d:lt><d:prop><d:getlastmodified/></d:prop><d:literal>%d</d:literal></d:lt>
 <d:gt><d:prop><d:getlastmodified/></d:prop><d:literal>0</d:literal></d:gt>
 <d:or><d:like><d:prop><d:getcontenttype/></d:prop><d:literal>image/%%</d:literal></d:like>
       <d:like><d:prop><d:getcontenttype/></d:prop><d:literal>video/%%</d:literal></d:like></d:or>
</d:and></d:where>
<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order></d:orderby>
<d:limit><d:nresults>%d</d:nresults></d:limit>
</d:basicsearch></d:searchrequest>`

func hrefs(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<d:href>([^<]+)</d:href>`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestSearchPhotos(t *testing.T) {
	h := newDAV(t, 0)
	must(t, h, 201, davRequest("MKCOL", "/remote.php/dav/files/u/DCIM", ""))
	// Six pictures and videos, a day apart, and what is not one.
	for i, name := range []string{"a.jpg", "b.png", "c.mp4", "d.JPG", "e.heic", "f.webp"} {
		must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/DCIM/"+name, "x", "X-OC-Mtime", fmt.Sprint(1700000000+i*86400)))
	}
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/notes.txt", "x", "X-OC-Mtime", "1700500000"))
	// Android first asks whether the server searches.
	if w := muxed(h, davRequest("OPTIONS", "/remote.php/dav", "")); !strings.Contains(w.Header().Get("Allow"), "SEARCH") {
		t.Fatalf("OPTIONS /remote.php/dav: Allow %q lacks SEARCH", w.Header().Get("Allow"))
	}
	// The first page: the newest 4 before now, newest first.
	got := hrefs(must(t, h, 207, davRequest("SEARCH", "/remote.php/dav", fmt.Sprintf(androidGallery, 1800000000, 4), "Content-Type", "text/xml")))
	want := []string{"/remote.php/dav/files/u/DCIM/f.webp", "/remote.php/dav/files/u/DCIM/e.heic", "/remote.php/dav/files/u/DCIM/d.JPG", "/remote.php/dav/files/u/DCIM/c.mp4"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("first page = %q, want %q", got, want)
	}
	// The next page: before the last one's date.
	got = hrefs(must(t, h, 207, davRequest("SEARCH", "/remote.php/dav/", fmt.Sprintf(androidGallery, 1700000000+2*86400, 4))))
	if strings.Join(got, " ") != "/remote.php/dav/files/u/DCIM/b.png /remote.php/dav/files/u/DCIM/a.jpg" {
		t.Errorf("second page = %q", got)
	}
	// Another user's scope is refused.
	must(t, h, 400, davRequest("SEARCH", "/remote.php/dav", strings.Replace(fmt.Sprintf(androidGallery, 1800000000, 4), "/files/u<", "/files/other<", 1)))
	must(t, h, 400, davRequest("SEARCH", "/remote.php/dav", "<d:searchrequest xmlns:d=\"DAV:\"/>"))
}

// The iOS app's media view pages with headers.
func TestSearchPaginated(t *testing.T) {
	h := newDAV(t, 0)
	for i := range 5 {
		must(t, h, 201, davRequest("PUT", fmt.Sprintf("/remote.php/dav/files/u/p%d.jpg", i), "x", "X-OC-Mtime", fmt.Sprint(1700000000+i)))
	}
	body := `<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:basicsearch><d:select><d:prop><oc:fileid/></d:prop></d:select>
<d:from><d:scope><d:href>/files/u</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where><d:and><d:or><d:like><d:prop><d:getcontenttype/></d:prop><d:literal>image/%</d:literal></d:like></d:or>
<d:and><d:lte><d:prop><d:getlastmodified/></d:prop><d:literal>2030-01-01T00:00:00+02:00</d:literal></d:lte>
<d:gte><d:prop><d:getlastmodified/></d:prop><d:literal>2020-01-01T00:00:00+02:00</d:literal></d:gte></d:and></d:and></d:where>
<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order><d:order><d:prop><d:displayname/></d:prop><d:descending/></d:order></d:orderby>
<d:limit><d:nresults>200</d:nresults></d:limit></d:basicsearch></d:searchrequest>`
	w := muxed(h, davRequest("SEARCH", "/remote.php/dav", body, "X-NC-Paginate", "true", "X-NC-Paginate-Count", "2", "X-NC-Paginate-Offset", "2", "X-NC-Paginate-Token", "tok"))
	got := hrefs(w.Body.String())
	if strings.Join(got, " ") != "/remote.php/dav/files/u/p2.jpg /remote.php/dav/files/u/p1.jpg" || w.Header().Get("X-NC-Paginate") != "true" || w.Header().Get("X-NC-Paginate-Total") != "5" {
		t.Errorf("page 2 of 2 = %q, headers %v", got, w.Header())
	}
}

func TestFavorites(t *testing.T) {
	h := newDAV(t, 0)
	must(t, h, 201, davRequest("MKCOL", "/remote.php/dav/files/u/docs", ""))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/docs/a.txt", "a"))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/b.txt", "b"))
	star := func(p, v string) {
		t.Helper()
		body := `<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>` + v + `</oc:favorite></d:prop></d:set></d:propertyupdate>`
		if got := must(t, h, 207, davRequest("PROPPATCH", p, body)); !strings.Contains(got, "200 OK") {
			t.Fatalf("PROPPATCH favorite: %s", got)
		}
	}
	star("/remote.php/dav/files/u/docs/a.txt", "1")
	star("/remote.php/dav/files/u/docs", "1")
	star("/remote.php/dav/files/u/b.txt", "1")
	star("/remote.php/dav/files/u/b.txt", "0") // unstarred (the iOS app's way)
	// The star follows a rename.
	must(t, h, 201, davRequest("MOVE", "/remote.php/dav/files/u/docs/a.txt", "", "Destination", "https://box/remote.php/dav/files/u/docs/renamed.txt"))
	list := must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/files/u/docs/", `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:favorite/></d:prop></d:propfind>`, "Depth", "1"))
	if strings.Count(list, "<oc:favorite>1</oc:favorite>") != 2 {
		t.Errorf("PROPFIND favorites:\n%s", list)
	}
	// The iOS app's and desktop's favourites REPORT.
	report := `<oc:filter-files xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:favorite/><d:resourcetype/></d:prop><oc:filter-rules><oc:favorite>1</oc:favorite></oc:filter-rules></oc:filter-files>`
	got := hrefs(must(t, h, 207, davRequest("REPORT", "/remote.php/dav/files/u", report)))
	if strings.Join(got, " ") != "/remote.php/dav/files/u/docs/ /remote.php/dav/files/u/docs/renamed.txt" {
		t.Errorf("REPORT favourites = %q", got)
	}
	// The Android app's: a SEARCH for oc:favorite yes.
	search := `<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:basicsearch><d:select><d:prop><oc:fileid/></d:prop></d:select>
<d:from><d:scope><d:href>/files/u</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where><d:eq><d:prop><oc:favorite/></d:prop><d:literal>yes</d:literal></d:eq></d:where><d:orderby/></d:basicsearch></d:searchrequest>`
	if got := hrefs(must(t, h, 207, davRequest("SEARCH", "/remote.php/dav", search))); len(got) != 2 {
		t.Errorf("SEARCH favourites = %q", got)
	}
	must(t, h, 400, davRequest("REPORT", "/remote.php/dav/files/u", strings.Replace(report, "<oc:favorite>1</oc:favorite></oc:filter-rules>", "<oc:systemtag>4</oc:systemtag></oc:filter-rules>", 1)))
}

// A folder's oc:size is what its files take (the desktop client asks
// before syncing a large one), kept as they change.
func TestFolderSize(t *testing.T) {
	h := newDAV(t, 0)
	must(t, h, 201, davRequest("MKCOL", "/remote.php/dav/files/u/a", ""))
	must(t, h, 201, davRequest("MKCOL", "/remote.php/dav/files/u/a/b", ""))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/a/b/x.bin", strings.Repeat("x", 1000)))
	must(t, h, 201, davRequest("PUT", "/remote.php/dav/files/u/a/y.bin", strings.Repeat("y", 234)))
	body := `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:size/></d:prop></d:propfind>`
	list := must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/files/u/", body, "Depth", "1"))
	if !strings.Contains(list, "<d:href>/remote.php/dav/files/u/a/</d:href><d:propstat><d:prop><oc:size>1234</oc:size>") {
		t.Errorf("a's size:\n%s", list)
	}
	must(t, h, 204, davRequest("DELETE", "/remote.php/dav/files/u/a/b/x.bin", ""))
	list = must(t, h, 207, davRequest("PROPFIND", "/remote.php/dav/files/u/a", body, "Depth", "0"))
	if !strings.Contains(list, "<oc:size>234</oc:size>") {
		t.Errorf("a's size after a delete:\n%s", list)
	}
}

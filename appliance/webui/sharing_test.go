package webui

import (
	"archive/zip"
	"bytes"
	"image/color"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestShareWithUserPage(t *testing.T) {
	s := newSite(t)
	tree, _ := s.store.Tree("ann")
	tree.Mkdir("Trip")
	tree.Close()
	s.putFile("ann", "Trip/a.txt", []byte("from ann"), time.Now())
	cookie, csrf := s.login("ann", "ann-password")
	// The file row links to the sharing form.
	if _, page := s.do("GET", "/files/", cookie, nil); !strings.Contains(page, `href="/shares?path=%2fTrip"`) {
		t.Fatalf("no Share link on the row:\n%s", page)
	}
	resp, page := s.do("POST", "/shares", cookie, url.Values{"csrf": {csrf}, "action": {"add"}, "path": {"/Trip"}, "kind": {"user"}, "with": {"bob"}, "rights": {"read"}})
	if resp.StatusCode != 200 || !strings.Contains(page, "Shared with bob.") {
		t.Fatalf("share = %s\n%s", resp.Status, page)
	}
	// Bob sees it in his files, reads it, cannot change it.
	bob, _ := s.login("bob", "bob-password")
	if _, page := s.do("GET", "/files/", bob, nil); !strings.Contains(page, ">Trip/<") {
		t.Errorf("bob's files page:\n%s", page)
	}
	if _, body := s.do("GET", "/files/Trip/a.txt", bob, nil); body != "from ann" {
		t.Errorf("bob downloads %q", body)
	}
	bt, _ := s.store.Tree("bob")
	if _, err := bt.Create("Trip/b.txt", false); err == nil {
		t.Error("bob wrote in a read-only share")
	}
	bt.Close()
	// Ann stops sharing: at once.
	_, page = s.do("GET", "/shares", cookie, nil)
	id := regexp.MustCompile(`name="id" value="(\d+)"`).FindStringSubmatch(page)
	s.do("POST", "/shares", cookie, url.Values{"csrf": {csrf}, "action": {"revoke"}, "id": {id[1]}})
	if resp, _ := s.do("GET", "/files/Trip/a.txt", bob, nil); resp.StatusCode != 404 {
		t.Errorf("after the revoke, bob's download = %s", resp.Status)
	}
}

func TestPublicLinkPages(t *testing.T) {
	s := newSite(t)
	tree, _ := s.store.Tree("ann")
	tree.Mkdir("Party")
	tree.Close()
	s.putFile("ann", "Party/cake.jpg", jpegBytes(color.RGBA{200, 100, 50, 255}), time.Now())
	s.putFile("ann", "secret.txt", []byte("not shared"), time.Now())
	cookie, csrf := s.login("ann", "ann-password")
	_, page := s.do("POST", "/shares", cookie, url.Values{"csrf": {csrf}, "action": {"add"}, "path": {"/Party"}, "kind": {"link"},
		"rights": {"read"}, "password": {"cake-please"}})
	link := regexp.MustCompile(`<code id="new-link">https://[^/]+(/index.php/s/[A-Za-z0-9]{15})</code>`).FindStringSubmatch(page)
	if link == nil {
		t.Fatalf("no link made:\n%s", page)
	}
	base := link[1]
	// No account: the password first.
	if resp, page := s.do("GET", base, "", nil); resp.StatusCode != 401 || !strings.Contains(page, "This share is protected") || strings.Contains(page, "cake.jpg") {
		t.Fatalf("before the password: %s\n%s", resp.Status, page)
	}
	if resp, _ := s.do("POST", base, "", url.Values{"password": {"wrong"}}); resp.StatusCode != 401 {
		t.Errorf("a wrong password = %s", resp.Status)
	}
	resp, _ := s.do("POST", base, "", url.Values{"password": {"cake-please"}})
	lc := cookieOf(resp, "link_"+strings.TrimPrefix(base, "/index.php/s/"))
	if resp.StatusCode != http.StatusSeeOther || lc == nil {
		t.Fatalf("the right password = %s", resp.Status)
	}
	visitor := lc.Name + "=" + lc.Value
	resp, page = s.do("GET", base, visitor, nil)
	if resp.StatusCode != 200 || !strings.Contains(page, "cake.jpg") || strings.Contains(page, "secret.txt") || strings.Contains(page, "ann") || strings.Contains(page, "Log out") {
		t.Errorf("the link's page:\n%s", page)
	}
	if resp, body := s.do("GET", base+"/download?path=/cake.jpg", visitor, nil); resp.StatusCode != 200 || len(body) < 100 {
		t.Errorf("download = %s", resp.Status)
	}
	// The whole folder: Party.zip, holding Party/.
	resp, body := s.do("GET", base+"/download", visitor, nil)
	if cd := resp.Header.Get("Content-Disposition"); resp.StatusCode != 200 || !strings.Contains(cd, "filename=Party.zip") {
		t.Errorf("download all = %s, %q, want Party.zip", resp.Status, cd)
	}
	if zr, err := zip.NewReader(strings.NewReader(body), int64(len(body))); err != nil || len(zr.File) != 1 || zr.File[0].Name != "Party/cake.jpg" {
		t.Errorf("the link's zip: %v, want Party/cake.jpg alone", zipNames(zr, err))
	}
	if resp, _ := s.do("GET", base+"/preview?s=256&path=/cake.jpg", visitor, nil); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" {
		t.Errorf("the gallery's thumbnail = %s", resp.Status)
	}
	for _, p := range []string{"/../secret.txt", "/../../ann/secret.txt"} {
		if resp, body := s.do("GET", base+"/download?path="+url.QueryEscape(p), visitor, nil); strings.Contains(body, "not shared") {
			t.Errorf("%s leaked: %s", p, resp.Status)
		}
	}
	// Read-only: no uploads.
	if resp, _ := s.do("POST", base+"/upload", visitor, nil); resp.StatusCode != 403 {
		t.Errorf("an upload to a read-only link = %s", resp.Status)
	}
}

func TestDropLink(t *testing.T) {
	s := newSite(t)
	tree, _ := s.store.Tree("ann")
	tree.Mkdir("Inbox")
	tree.Close()
	s.putFile("ann", "Inbox/earlier.txt", []byte("earlier"), time.Now())
	cookie, csrf := s.login("ann", "ann-password")
	_, page := s.do("POST", "/shares", cookie, url.Values{"csrf": {csrf}, "action": {"add"}, "path": {"/Inbox"}, "kind": {"link"}, "rights": {"drop"}})
	base := regexp.MustCompile(`(/index.php/s/[A-Za-z0-9]{15})</code>`).FindStringSubmatch(page)[1]
	resp, page := s.do("GET", base, "", nil)
	visit := regexp.MustCompile(`name="visit" value="([^"]+)"`).FindStringSubmatch(page)
	if visit == nil || strings.Contains(page, "earlier.txt") {
		t.Fatalf("the drop's page:\n%s", page)
	}
	lc := cookieOf(resp, "link_"+strings.TrimPrefix(base, "/index.php/s/"))
	send := func(token, name, content string) *http.Response {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.WriteField("visit", token)
		fw, _ := mw.CreateFormFile("files", name)
		fw.Write([]byte(content))
		mw.Close()
		req, _ := http.NewRequest("POST", s.srv.URL+base+"/upload", &b)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Cookie", lc.Name+"="+lc.Value)
		resp, err := s.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := send(visit[1], "earlier.txt", "from a guest"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("upload = %s", resp.Status)
	}
	if resp := send("forged", "x.txt", "x"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an upload without the page's token = %s", resp.Status)
	}
	// Nothing replaced: the guest's file came beside.
	at, _ := s.store.Tree("ann")
	defer at.Close()
	for name, want := range map[string]string{"Inbox/earlier.txt": "earlier", "Inbox/earlier (2).txt": "from a guest"} {
		f, err := at.Open(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var b bytes.Buffer
		b.ReadFrom(f)
		f.Close()
		if b.String() != want {
			t.Errorf("%s = %q, want %q", name, b.String(), want)
		}
	}
	if resp, _ := s.do("GET", base+"/download?path=/earlier.txt", lc.Name+"="+lc.Value, nil); resp.StatusCode != 403 {
		t.Errorf("a drop's download = %s", resp.Status)
	}
}

// zipNames are the names of a zip's entries, or why it could not be read.
func zipNames(zr *zip.Reader, err error) any {
	if err != nil {
		return err
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	return names
}

// The sharing page puts files and folders first, says they are shared
// from their rows on the Files page, and links there; calendars and
// address books come after. Each link has a button that copies it and
// its QR code.
func TestSharesPage(t *testing.T) {
	s := newSite(t)
	s.sharing.Collections = func(string) ([]string, []string) { return []string{"home"}, []string{"contacts"} }
	s.book.CollectionExists = func(owner, item, name string) bool { return owner == "ann" && item == "calendar" && name == "home" }
	tree, _ := s.store.Tree("ann")
	tree.Mkdir("Party")
	tree.Close()
	cookie, csrf := s.login("ann", "ann-password")
	_, page := s.do("POST", "/shares", cookie, url.Values{"csrf": {csrf}, "action": {"add"}, "path": {"/Party"}, "kind": {"link"}, "rights": {"read"}})
	if !strings.Contains(page, `data-copy="new-link"`) || !strings.Contains(page, `aria-label="QR code of the new link"`) {
		t.Errorf("the new link has no copy button or QR code:\n%s", page)
	}
	s.do("POST", "/shares", cookie, url.Values{"csrf": {csrf}, "action": {"add"}, "kind": {"user"}, "collection": {"calendar/home"}, "with": {"bob"}, "rights": {"read"}})
	_, page = s.do("GET", "/shares", cookie, nil)
	files, fromRows, colls := strings.Index(page, `id="shared-files"`), strings.Index(page, `from their rows on <a href="/files/">the Files page</a>`), strings.Index(page, `id="shared-collections"`)
	link, calendar := strings.Index(page, `/index.php/s/`), strings.Index(page, `calendar home`)
	if files < 0 || fromRows < files || colls < fromRows || link < files || link > colls || calendar < colls {
		t.Errorf("the page's order: files %d, from their rows %d, the link %d, calendars %d, the calendar's share %d; want them so:\n%s", files, fromRows, link, colls, calendar, page)
	}
	row := regexp.MustCompile(`<code class="link-url" id="(link-\d+)">https://[^<]+/index.php/s/\w+</code>\s*<span class="link-acts"><button type="button" class="link" data-copy="(link-\d+)"`).FindStringSubmatch(page)
	if row == nil || row[1] != row[2] {
		t.Errorf("the link's row has no button copying it: %q", row)
	}
	if !strings.Contains(page, `<svg class="qr" role="img" aria-label="QR code of the link to /Party"`) {
		t.Error("the link's row has no QR code")
	}
}

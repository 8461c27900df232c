package main

// A replay of what the Nextcloud apps send, against the running box: at
// login, on the photos tab, on auto-upload, on share, and in the trash
// and versions views, with the headers and bodies the apps' own code
// builds, each answer checked for what the app reads of it. The requests
// were taken from the apps' public sources (read, not copied):
//
//   - Android: nextcloud/android 36277a10 (35.0.0 Alpha) and its library
//     nextcloud/android-library 5a9da0c5 (the code the app pins, 33037ef2);
//   - iOS: nextcloud/NextcloudKit 6d21f125 (after 7.4.1), which the iOS
//     app's requests go through, and the iOS app's NCMediaNetwork and
//     NCService as of 2026.

import (
	"bytes"
	"crypto/md5"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// app is a client of the box that sends requests as an app does.
type app struct {
	t          *testing.T
	c          *http.Client
	base       string
	user, pass string
	headers    map[string]string // on every request
}

func newApp(t *testing.T, b *box, headers map[string]string) *app {
	pem, err := os.ReadFile(b.caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	return &app{t: t, base: "https://localhost:" + b.port(b.https), headers: headers,
		c: &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request (hdr in pairs) and returns the answer and its body.
func (a *app) do(method, p, body string, hdr ...string) (*http.Response, string) {
	a.t.Helper()
	target := p
	if strings.HasPrefix(p, "/") {
		target = a.base + p
	}
	req, _ := http.NewRequest(method, target, strings.NewReader(body))
	for k, v := range a.headers {
		req.Header.Set(k, v)
	}
	if a.user != "" {
		req.SetBasicAuth(a.user, a.pass)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, p, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// want fails unless the answer has the status code.
func (a *app) want(what string, resp *http.Response, body string, codes ...int) {
	a.t.Helper()
	for _, c := range codes {
		if resp.StatusCode == c {
			return
		}
	}
	a.t.Errorf("%s: %s, want %v\n%.600s", what, resp.Status, codes, body)
}

func jsonOf(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %v\n%.300s", err, body)
	}
	return m
}

// dig walks a JSON value by keys.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// androidProps is the Android app's folder listing (WebdavUtils.getAllPropSet).
const androidProps = `<?xml version="1.0" encoding="UTF-8"?><D:propfind xmlns:D="DAV:"><D:prop>
<D:displayname/><D:getcontenttype/><D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:creationdate/><D:getetag/>
<oc:permissions xmlns:oc="http://owncloud.org/ns"/><oc:fileid xmlns:oc="http://owncloud.org/ns"/><oc:id xmlns:oc="http://owncloud.org/ns"/>
<oc:size xmlns:oc="http://owncloud.org/ns"/><oc:favorite xmlns:oc="http://owncloud.org/ns"/><oc:owner-id xmlns:oc="http://owncloud.org/ns"/>
<oc:owner-display-name xmlns:oc="http://owncloud.org/ns"/><oc:comments-unread xmlns:oc="http://owncloud.org/ns"/>
<nc:is-encrypted xmlns:nc="http://nextcloud.org/ns"/><nc:mount-type xmlns:nc="http://nextcloud.org/ns"/><nc:has-preview xmlns:nc="http://nextcloud.org/ns"/>
<nc:note xmlns:nc="http://nextcloud.org/ns"/><nc:sharees xmlns:nc="http://nextcloud.org/ns"/><nc:lock xmlns:nc="http://nextcloud.org/ns"/>
<nc:metadata-photos-size xmlns:nc="http://nextcloud.org/ns"/><nc:hidden xmlns:nc="http://nextcloud.org/ns"/>
</D:prop></D:propfind>`

// iosProps is NextcloudKit's folder listing (NKProperties), in part.
const iosProps = `<?xml version="1.0" encoding="UTF-8"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>
<d:displayname/><d:getlastmodified/><d:getetag/><d:getcontenttype/><d:resourcetype/><d:quota-available-bytes/><d:quota-used-bytes/><d:getcontentlength/>
<oc:permissions/><oc:id/><oc:fileid/><oc:size/><oc:favorite/><oc:share-types/><oc:owner-id/><oc:owner-display-name/><oc:comments-unread/>
<oc:checksums/><oc:downloadURL/><oc:data-fingerprint/><nc:creation_time/><nc:upload_time/><nc:is-encrypted/><nc:has-preview/><nc:mount-type/>
<nc:rich-workspace/><nc:note/><nc:lock/><nc:system-tags/><nc:metadata-photos-size/><nc:hidden/>
</d:prop></d:propfind>`

// testApps replays the apps' requests.
func testApps(t *testing.T, b *box) {
	b.addUser("mia", "mia-secret-1")
	b.addUser("leo", "leo-secret-1")
	droid := newApp(t, b, map[string]string{"User-Agent": "Mozilla/5.0 (Android) Nextcloud-android/35.0.0", "OCS-APIREQUEST": "true"})
	ios := newApp(t, b, map[string]string{"User-Agent": "Mozilla/5.0 (iOS) Nextcloud-iOS/7.1.0", "Accept": "application/json", "OCS-APIRequest": "true"})

	t.Run("login", func(t *testing.T) { appLogin(t, b, droid, ios) })
	droid.user, droid.pass = "mia", "mia-secret-1"
	ios.user, ios.pass = "mia", "mia-secret-1"
	t.Run("upload", func(t *testing.T) { appUpload(t, droid, ios) })
	t.Run("photos", func(t *testing.T) { appPhotos(t, droid, ios) })
	t.Run("share", func(t *testing.T) { appShare(t, droid, ios) })
	t.Run("trash-versions", func(t *testing.T) { appTrashVersions(t, droid, ios) })
}

// appLogin: status.php, the anonymous HEAD, the login flow v2 granted in
// the browser, then what both apps fetch with their app password.
func appLogin(t *testing.T, b *box, droid, ios *app) {
	resp, body := droid.do("GET", "/status.php", "")
	st := jsonOf(t, body)
	var major int
	fmt.Sscanf(fmt.Sprint(st["version"]), "%d.", &major)
	if resp.StatusCode != 200 || st["installed"] != true || st["maintenance"] != false || major < 31 || strings.Count(fmt.Sprint(st["version"]), ".") != 3 {
		t.Errorf("status.php: %s %s", resp.Status, body)
	}
	if resp, _ := droid.do("HEAD", "/remote.php/dav", ""); resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("anonymous HEAD /remote.php/dav = %s %q, want 401 Basic", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	// Login flow v2: started by the app, granted in a browser, polled.
	resp, body = droid.do("POST", "/index.php/login/v2", "")
	flow := jsonOf(t, body)
	token, _ := dig(flow, "poll", "token").(string)
	endpoint, _ := dig(flow, "poll", "endpoint").(string)
	login, _ := flow["login"].(string)
	if resp.StatusCode != 200 || token == "" || endpoint == "" || login == "" {
		t.Fatalf("login/v2: %s %s", resp.Status, body)
	}
	pollURL, _ := url.Parse(endpoint)
	poll := func() (*http.Response, string) {
		return droid.do("POST", pollURL.Path, "token="+url.QueryEscape(token), "Content-Type", "application/x-www-form-urlencoded")
	}
	if resp, _ := poll(); resp.StatusCode != 404 {
		t.Errorf("poll before the grant = %s, want 404", resp.Status)
	}
	c, session, _ := webSession(t, b, "mia", "mia-secret-1")
	loginURL, _ := url.Parse(login)
	page := func(method string, body url.Values) string {
		req, _ := http.NewRequest(method, droid.base+loginURL.Path, strings.NewReader(body.Encode()))
		req.Header.Set("Cookie", session)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return readAllString(resp.Body)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page("GET", nil))
	if csrf == nil {
		t.Fatal("the grant page has no form")
	}
	page("POST", url.Values{"csrf": {csrf[1]}})
	resp, body = poll()
	creds := jsonOf(t, body)
	pass, _ := creds["appPassword"].(string)
	if resp.StatusCode != 200 || creds["loginName"] != "mia" || pass == "" || creds["server"] == "" {
		t.Fatalf("poll after the grant: %s %s", resp.Status, body)
	}
	droid.user, droid.pass = "mia", pass
	ios.user, ios.pass = "mia", pass

	// Android, with the app password.
	resp, body = droid.do("GET", "/ocs/v2.php/cloud/user?format=json", "")
	if resp.StatusCode != 200 || dig(jsonOf(t, body), "ocs", "data", "id") != "mia" || dig(jsonOf(t, body), "ocs", "data", "quota") == nil {
		t.Errorf("cloud/user: %s %s", resp.Status, body)
	}
	resp, _ = droid.do("HEAD", "/remote.php/dav/files/mia/", "")
	droid.want("HEAD of the files", resp, "", 200)
	resp, body = droid.do("GET", "/ocs/v2.php/cloud/capabilities?format=json", "")
	caps := dig(jsonOf(t, body), "ocs", "data", "capabilities")
	for _, keys := range [][]string{{"core", "pollinterval"}, {"files", "bigfilechunking"}, {"files", "undelete"}, {"files", "versioning"},
		{"files_sharing", "resharing"}, {"files_sharing", "public", "enabled"}, {"files_sharing", "public", "password", "enforced"},
		{"files_sharing", "user", "send_mail"}, {"notifications", "ocs-endpoints"}} {
		if dig(caps, keys...) == nil {
			t.Errorf("capabilities lack %v, which the Android app reads as required", keys)
		}
	}
	if resp, _ := droid.do("GET", "/ocs/v2.php/cloud/capabilities?format=json", "", "If-None-Match", resp.Header.Get("ETag")); resp.StatusCode != 304 {
		t.Errorf("capabilities with their ETag = %s, want 304", resp.Status)
	}
	resp, _ = droid.do("GET", "/index.php/avatar/mia/512", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("ETag") == "" {
		t.Errorf("avatar: %s %s", resp.Status, resp.Header)
	}
	resp, body = droid.do("GET", "/ocs/v2.php/apps/notifications/api/v2/notifications?format=json", "")
	if _, ok := dig(jsonOf(t, body), "ocs", "data").([]any); resp.StatusCode != 200 || !ok {
		t.Errorf("notifications: %s %s", resp.Status, body)
	}
	resp, body = droid.do("PROPFIND", "/remote.php/dav/files/mia/", androidProps, "Depth", "1", "Content-Type", "text/xml")
	if resp.StatusCode != 207 || !strings.Contains(body, "<oc:permissions>") || !strings.Contains(body, "<d:href>/remote.php/dav/files/mia/</d:href>") {
		t.Errorf("the Android listing: %s %.500s", resp.Status, body)
	}

	// iOS: status, the user by name, capabilities over OCS v1, the avatar.
	resp, body = ios.do("GET", "/ocs/v2.php/cloud/users/mia", "")
	if resp.StatusCode != 200 || dig(jsonOf(t, body), "ocs", "meta", "statuscode") != 200.0 || dig(jsonOf(t, body), "ocs", "data", "id") != "mia" {
		t.Errorf("cloud/users/mia: %s %s", resp.Status, body)
	}
	resp, body = ios.do("GET", "/ocs/v1.php/cloud/capabilities", "")
	v := dig(jsonOf(t, body), "ocs", "data", "version")
	if resp.StatusCode != 200 || dig(jsonOf(t, body), "ocs", "meta", "statuscode") != 100.0 || dig(v, "major") == nil || dig(v, "string") == nil {
		t.Errorf("v1 capabilities: %s %.300s", resp.Status, body)
	}
	resp, _ = ios.do("GET", "/index.php/avatar/mia/384", "")
	if resp2, _ := ios.do("GET", "/index.php/avatar/mia/384", "", "If-None-Match", resp.Header.Get("ETag")); resp2.StatusCode != 304 {
		t.Errorf("the avatar with its ETag = %s, want 304", resp2.Status)
	}
	resp, body = ios.do("PROPFIND", "/remote.php/dav/files/mia/", iosProps, "Depth", "1", "Content-Type", "application/xml", "Accept", "application/xml")
	if resp.StatusCode != 207 || !strings.HasPrefix(body, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<d:multistatus xmlns:d="DAV:"`) || !strings.Contains(body, "<d:propstat><d:prop><d:displayname") {
		t.Errorf("the iOS listing (read by prefixed names, the 200 propstat first): %.1400s", body)
	}
}

// testPhoto is a JPEG of w×h.
func testPhoto(w, h int) []byte {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(m.Pix); i += 4 {
		m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = byte(i/(4*w)), 90, byte(i%251), 255
	}
	var buf bytes.Buffer
	jpeg.Encode(&buf, m, nil)
	return buf.Bytes()
}

// appUpload: Android's single PUT and its chunked upload v2 (6-digit
// chunk names, no OC-Total-Length), iOS's chunks (1, 2... with
// OC-Total-Length and the Destination on every request).
func appUpload(t *testing.T, droid, ios *app) {
	resp, _ := droid.do("MKCOL", "/remote.php/dav/files/mia/InstantUpload", "")
	if resp.StatusCode != 201 || resp.Header.Get("OC-FileId") == "" {
		t.Errorf("MKCOL: %s %v", resp.Status, resp.Header)
	}
	if resp, _ := droid.do("HEAD", "/remote.php/dav/files/mia/InstantUpload/IMG_0001.jpg", ""); resp.StatusCode != 404 {
		t.Errorf("HEAD of a name not taken = %s", resp.Status)
	}
	photo := testPhoto(800, 600)
	resp, body := droid.do("PUT", "/remote.php/dav/files/mia/InstantUpload/IMG_0001.jpg", string(photo),
		"OC-Total-Length", fmt.Sprint(len(photo)), "X-OC-Mtime", "1720000000", "X-OC-Ctime", "1720000000", "Content-Type", "image/jpeg")
	if resp.StatusCode != 201 || resp.Header.Get("OC-FileId") == "" || resp.Header.Get("ETag") == "" || resp.Header.Get("X-OC-MTime") != "accepted" {
		t.Errorf("the Android PUT: %s %v %s", resp.Status, resp.Header, body)
	}
	// Chunked v2, Android's way.
	big := bytes.Repeat(photo, 4)
	sum := md5.Sum(big)
	dir := "/remote.php/dav/uploads/mia/" + hex.EncodeToString(sum[:])
	dest := droid.base + "/remote.php/dav/files/mia/InstantUpload/VID_0001.mp4"
	resp, _ = droid.do("MKCOL", dir, "", "Destination", dest)
	droid.want("MKCOL of the upload", resp, "", 201)
	resp, body = droid.do("PROPFIND", dir, `<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getcontenttype/><d:resourcetype/><d:getcontentlength/></d:prop></d:propfind>`, "Depth", "1")
	droid.want("PROPFIND of the upload", resp, body, 207)
	third := len(big) / 3
	for i, part := range []string{string(big[:third]), string(big[third : 2*third]), string(big[2*third:])} {
		resp, body := droid.do("PUT", fmt.Sprintf("%s/%06d", dir, i+1), part, "Destination", dest, "Content-Type", "video/mp4")
		droid.want("a chunk", resp, body, 201)
	}
	resp, body = droid.do("MOVE", dir+"/.file", "", "Destination", dest, "Overwrite", "T", "X-OC-Mtime", "1720000100")
	if resp.StatusCode != 201 || resp.Header.Get("OC-FileId") == "" || resp.Header.Get("X-OC-MTime") != "accepted" {
		t.Errorf("the assembly: %s %v %s", resp.Status, resp.Header, body)
	}
	if resp, body := droid.do("GET", "/remote.php/dav/files/mia/InstantUpload/VID_0001.mp4", ""); resp.StatusCode != 200 || body != string(big) {
		t.Errorf("the assembled file: %s, %d bytes", resp.Status, len(body))
	}
	// iOS: parts 1... 11, OC-Total-Length and Destination everywhere.
	dest = ios.base + "/remote.php/dav/files/mia/InstantUpload/IMG_0002.jpg"
	dir = "/remote.php/dav/uploads/mia/ios-transfer"
	total := fmt.Sprint(len(big))
	if resp, _ := ios.do("PROPFIND", dir, iosProps, "Depth", "0", "Destination", dest, "OC-Total-Length", total); resp.StatusCode != 404 {
		t.Errorf("PROPFIND of a transfer not begun = %s", resp.Status)
	}
	resp, _ = ios.do("MKCOL", dir, "", "Destination", dest, "OC-Total-Length", total)
	ios.want("the iOS MKCOL", resp, "", 201)
	n := 11
	size := (len(big) + n - 1) / n
	for i := 0; i < n; i++ {
		part := big[i*size : min((i+1)*size, len(big))]
		resp, body := ios.do("PUT", fmt.Sprintf("%s/%d", dir, i+1), string(part), "Destination", dest, "OC-Total-Length", total, "Content-Type", "application/octet-stream")
		ios.want("an iOS chunk", resp, body, 201)
	}
	resp, body = ios.do("MOVE", dir+"/.file", "", "Destination", dest, "Overwrite", "T", "OC-Total-Length", total, "X-OC-MTime", "1720000200.0", "X-OC-CTime", "1720000200.0")
	if resp.StatusCode != 201 || resp.Header.Get("OC-FileId") == "" || resp.Header.Get("OC-ETag") == "" && resp.Header.Get("ETag") == "" {
		t.Errorf("the iOS assembly: %s %v %s", resp.Status, resp.Header, body)
	}
	if resp, body := ios.do("GET", "/remote.php/dav/files/mia/InstantUpload/IMG_0002.jpg", ""); body != string(big) {
		t.Errorf("the iOS file (parts 1 to 11 in order): %s, %d bytes", resp.Status, len(body))
	}
}

// appPhotos: Android's OPTIONS and gallery SEARCH and its thumbnails;
// iOS's paginated media SEARCH and its previews with ETags.
func appPhotos(t *testing.T, droid, ios *app) {
	resp, _ := droid.do("OPTIONS", "/remote.php/dav", "")
	if !strings.Contains(resp.Header.Get("Allow"), "SEARCH") {
		t.Fatalf("OPTIONS /remote.php/dav: Allow %q lacks SEARCH: the Android photos view gives up", resp.Header.Get("Allow"))
	}
	search := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="http://nextcloud.com/ns"><d:basicsearch>
<d:select><d:prop><oc:fileid xmlns:oc="http://owncloud.org/ns"/><d:getcontenttype/><d:getlastmodified/><d:getetag/><nc:has-preview xmlns:nc="http://nextcloud.org/ns"/></d:prop></d:select>
<d:from><d:scope><d:href>/files/mia</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where><d:and><d:lt><d:prop><d:getlastmodified/></d:prop><d:literal>%d</d:literal></d:lt><d:gt><d:prop><d:getlastmodified/></d:prop><d:literal>0</d:literal></d:gt>
<d:or><d:like><d:prop><d:getcontenttype/></d:prop><d:literal>image/%%</d:literal></d:like><d:like><d:prop><d:getcontenttype/></d:prop><d:literal>video/%%</d:literal></d:like></d:or></d:and></d:where>
<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order></d:orderby><d:limit><d:nresults>150</d:nresults></d:limit>
</d:basicsearch></d:searchrequest>`, time.Now().Unix())
	resp, body := droid.do("SEARCH", "/remote.php/dav", search, "Content-Type", "text/xml")
	found := regexp.MustCompile(`<d:href>/remote.php/dav/files/mia/InstantUpload/([^<]+)</d:href>.*?<oc:fileid>(\d+)</oc:fileid>`).FindAllStringSubmatch(body, -1)
	var names []string
	for _, f := range found {
		names = append(names, f[1])
	}
	if resp.StatusCode != 207 || strings.Join(names, " ") != "IMG_0002.jpg VID_0001.mp4 IMG_0001.jpg" || !strings.Contains(body, "<nc:has-preview>true</nc:has-preview>") {
		t.Fatalf("the gallery's SEARCH (newest first): %s %q %.800s", resp.Status, names, body)
	}
	for _, f := range found {
		resp, _ := droid.do("GET", "/index.php/core/preview?fileId="+f[2]+"&x=352&y=352&a=1&mode=cover&forceIcon=0", "",
			"Cookie", "nc_sameSiteCookielax=true;nc_sameSiteCookiestrict=true")
		want := 200 // a picture's thumbnail; a video has none, and the app shows its icon
		if strings.HasSuffix(f[1], ".mp4") {
			want = 404
		}
		if resp.StatusCode != want || want == 200 && resp.Header.Get("Content-Type") != "image/jpeg" {
			t.Errorf("thumbnail of %s: %s %s, want %d", f[1], resp.Status, resp.Header.Get("Content-Type"), want)
		}
	}
	iosSearch := `<?xml version="1.0" encoding="UTF-8"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:basicsearch>
<d:select><d:prop><id xmlns="http://owncloud.org/ns"/><fileid xmlns="http://owncloud.org/ns"/><d:getetag/><d:getlastmodified/><upload_time xmlns="http://nextcloud.org/ns"/><size xmlns="http://owncloud.org/ns"/><has-preview xmlns="http://nextcloud.org/ns"/></d:prop></d:select>
<d:from><d:scope><d:href>/files/mia</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where><d:and><d:or><d:like><d:prop><d:getcontenttype/></d:prop><d:literal>image/%</d:literal></d:like><d:like><d:prop><d:getcontenttype/></d:prop><d:literal>video/%</d:literal></d:like></d:or>
<d:and><d:lte><d:prop><d:getlastmodified/></d:prop><d:literal>2030-01-01T00:00:00+02:00</d:literal></d:lte><d:gte><d:prop><d:getlastmodified/></d:prop><d:literal>2020-01-01T00:00:00+02:00</d:literal></d:gte></d:and></d:and></d:where>
<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order><d:order><d:prop><d:displayname/></d:prop><d:descending/></d:order></d:orderby>
<d:limit><d:nresults>200</d:nresults></d:limit></d:basicsearch></d:searchrequest>`
	resp, body = ios.do("SEARCH", "/remote.php/dav", iosSearch, "Content-Type", "application/xml", "Accept", "application/xml",
		"X-NC-Paginate", "true", "X-NC-Paginate-Count", "2", "X-NC-Paginate-Offset", "0")
	page := regexp.MustCompile(`<oc:fileid>(\d+)</oc:fileid>`).FindAllStringSubmatch(body, -1)
	if resp.StatusCode != 207 || len(page) != 2 || resp.Header.Get("X-NC-Paginate") != "true" {
		t.Errorf("the iOS media page: %s %v %.500s", resp.Status, resp.Header, body)
	}
	resp, _ = ios.do("GET", "/index.php/core/preview?fileId="+page[0][1]+"&x=1024&y=1024&a=1&mode=cover&forceIcon=0&mimeFallback=0&etag=x", "")
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == "" {
		t.Fatalf("the iOS preview: %s", resp.Status)
	}
	if resp, _ := ios.do("GET", "/index.php/core/preview?fileId="+page[0][1]+"&x=1024&y=1024&a=1&mode=cover&forceIcon=0&mimeFallback=0&etag=x", "",
		"If-None-Match", resp.Header.Get("ETag")); resp.StatusCode != 304 {
		t.Errorf("the iOS preview with its ETag = %s, want 304", resp.Status)
	}
}

// appShare: Android's share menu (a form, XML back; JSON updates; the
// sharees), iOS's (a form, JSON back), and what the recipient then sees.
func appShare(t *testing.T, droid, ios *app) {
	const api = "/ocs/v2.php/apps/files_sharing/api/v1"
	resp, body := droid.do("GET", api+"/sharees?format=json&itemType=file&search=le&page=1&perPage=50&lookup=false", "")
	if !strings.Contains(body, `"shareWith":"leo"`) {
		t.Errorf("sharees: %s %s", resp.Status, body)
	}
	resp, body = droid.do("GET", api+"/shares?path=%2FInstantUpload&reshares=true&subfiles=false", "")
	if resp.StatusCode != 200 || !strings.Contains(body, "<ocs><meta><status>ok</status>") {
		t.Errorf("the Android share list (XML): %s %.300s", resp.Status, body)
	}
	resp, body = droid.do("POST", api+"/shares", "path=%2FInstantUpload&shareType=0&shareWith=leo&permissions=1", "Content-Type", "application/x-www-form-urlencoded")
	id := regexp.MustCompile(`<id>(\d+)</id>`).FindStringSubmatch(body)
	if resp.StatusCode != 200 || id == nil || !strings.Contains(body, "<item_type>folder</item_type>") {
		t.Fatalf("the Android share: %s %.500s", resp.Status, body)
	}
	resp, body = droid.do("GET", api+"/shares/"+id[1]+"?include_tags=true", "")
	if !strings.Contains(body, "<element>") || !strings.Contains(body, "<share_with>leo</share_with>") {
		t.Errorf("GET the share: %s %.400s", resp.Status, body)
	}
	resp, body = droid.do("PUT", api+"/shares/"+id[1], `{"permissions":"15","note":"for you"}`, "Content-Type", "application/json")
	if !strings.Contains(body, "<permissions>15</permissions>") || !strings.Contains(body, "<note>for you</note>") {
		t.Errorf("the Android update: %s %.400s", resp.Status, body)
	}
	// Leo sees it at the top of his files, can write in it, and is told.
	l := *droid
	leo := &l
	leo.user, leo.pass = "leo", "leo-secret-1"
	resp, body = leo.do("PROPFIND", "/remote.php/dav/files/leo/", androidProps, "Depth", "1")
	if resp.StatusCode != 207 || !strings.Contains(body, "<d:href>/remote.php/dav/files/leo/InstantUpload/</d:href>") || !strings.Contains(body, "<nc:mount-type>shared</nc:mount-type>") ||
		!regexp.MustCompile(`<oc:permissions>SG[^<]*CK</oc:permissions>`).MatchString(body) || !strings.Contains(body, "<oc:owner-id>mia</oc:owner-id>") {
		t.Errorf("leo's listing:\n%.1500s", body)
	}
	if resp, _ := leo.do("PUT", "/remote.php/dav/files/leo/InstantUpload/from-leo.txt", "hi"); resp.StatusCode != 201 {
		t.Errorf("leo's PUT in the share = %s", resp.Status)
	}
	resp, body = leo.do("GET", "/ocs/v2.php/apps/notifications/api/v2/notifications?format=json", "")
	if resp.StatusCode != 200 || !strings.Contains(body, "mia shared the folder InstantUpload with you") {
		t.Errorf("leo's notifications: %s", body)
	}
	// iOS: a public link with a password, JSON.
	resp, body = ios.do("POST", api+"/shares", "path=%2FInstantUpload%2FIMG_0001.jpg&shareType=3&permissions=1&password=pass-word-1", "Content-Type", "application/x-www-form-urlencoded")
	link := jsonOf(t, body)
	if resp.StatusCode != 200 || dig(link, "ocs", "meta", "statuscode") != 200.0 || dig(link, "ocs", "data", "token") == nil || dig(link, "ocs", "data", "url") == nil {
		t.Errorf("the iOS link: %s %.400s", resp.Status, body)
	}
	resp, body = ios.do("GET", api+"/shares?reshares=true&subfiles=false&shared_with_me=false", "")
	if n := len(dig(jsonOf(t, body), "ocs", "data").([]any)); resp.StatusCode != 200 || n != 2 {
		t.Errorf("the iOS share list: %d shares, want 2: %.300s", n, body)
	}
	// The owner's listing says what is shared.
	resp, body = droid.do("PROPFIND", "/remote.php/dav/files/mia/", iosProps, "Depth", "1")
	if resp.StatusCode != 207 || !strings.Contains(body, "<oc:share-types><oc:share-type>0</oc:share-type></oc:share-types>") {
		t.Errorf("mia's listing lacks the share type:\n%.1200s", body)
	}
	if resp, _ := droid.do("DELETE", api+"/shares/"+id[1], ""); resp.StatusCode != 200 {
		t.Errorf("DELETE the share = %s", resp.Status)
	}
	if resp, _ := leo.do("PROPFIND", "/remote.php/dav/files/leo/InstantUpload/", "", "Depth", "0"); resp.StatusCode != 404 {
		t.Errorf("leo's share after it ended = %s, want 404", resp.Status)
	}
}

// appTrashVersions: a file overwritten and one deleted; the Android and
// iOS trash listings, a restore each way, the versions list and a
// restore, as the apps name them.
func appTrashVersions(t *testing.T, droid, ios *app) {
	file := "/remote.php/dav/files/mia/notes.txt"
	droid.do("PUT", file, "first", "X-OC-Mtime", "1700000000")
	droid.do("PUT", file, "second", "X-OC-Mtime", "1700000500")
	_, body := droid.do("PROPFIND", file, androidProps, "Depth", "0")
	fileID := regexp.MustCompile(`<oc:fileid>(\d+)</oc:fileid>`).FindStringSubmatch(body)[1]
	// Versions: Android names the version by its date in seconds.
	resp, body := droid.do("PROPFIND", "/remote.php/dav/versions/mia/versions/"+fileID,
		`<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><d:getcontenttype/><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:creationdate/><oc:id/><oc:size/></d:prop></d:propfind>`, "Depth", "1")
	if resp.StatusCode != 207 || !strings.Contains(body, "/versions/"+fileID+"/1700000000</d:href>") || !strings.Contains(body, "<d:getlastmodified>Tue, 14 Nov 2023 22:13:20 GMT</d:getlastmodified>") {
		t.Fatalf("the versions: %s %.800s", resp.Status, body)
	}
	resp, body = droid.do("MOVE", "/remote.php/dav/versions/mia/versions/"+fileID+"/1700000000", "",
		"Destination", droid.base+"/remote.php/dav/versions/mia/restore/"+fileID, "Overwrite", "T")
	droid.want("the Android version restore", resp, body, 201, 204)
	if _, body := droid.do("GET", file, ""); body != "first" {
		t.Errorf("after the version restore, notes.txt holds %q", body)
	}
	// Trash.
	droid.do("PUT", "/remote.php/dav/files/mia/gone.txt", "gone")
	droid.do("PUT", "/remote.php/dav/files/mia/also-gone.txt", "also gone")
	droid.do("DELETE", "/remote.php/dav/files/mia/gone.txt", "")
	droid.do("DELETE", "/remote.php/dav/files/mia/also-gone.txt", "")
	trashProps := `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop><d:resourcetype/><d:getcontenttype/><d:getcontentlength/><oc:size/><oc:id/><nc:trashbin-filename/><nc:trashbin-original-location/><nc:trashbin-deletion-time/></d:prop></d:propfind>`
	resp, body = droid.do("PROPFIND", "/remote.php/dav/trashbin/mia/trash", trashProps, "Depth", "1")
	hrefs := regexp.MustCompile(`<d:href>(/remote.php/dav/trashbin/mia/trash/[^<]+)</d:href>`).FindAllStringSubmatch(body, -1)
	if resp.StatusCode != 207 || len(hrefs) != 2 || !strings.Contains(body, "<nc:trashbin-filename>gone.txt</nc:trashbin-filename>") {
		t.Fatalf("the Android trash: %s %.800s", resp.Status, body)
	}
	// Android restores to restore/ + the original name; iOS to the href's
	// last part.
	var goneHref, alsoHref string
	for _, h := range hrefs {
		if strings.Contains(h[1], "/also-gone.txt.d") {
			alsoHref = h[1]
		} else {
			goneHref = h[1]
		}
	}
	resp, body = droid.do("MOVE", goneHref, "", "Destination", droid.base+"/remote.php/dav/trashbin/mia/restore/"+url.PathEscape("gone.txt"), "Overwrite", "T")
	droid.want("the Android trash restore", resp, body, 201)
	resp, body = ios.do("PROPFIND", "/remote.php/dav/trashbin/mia/trash/", iosProps[:len(iosProps)-len("</d:prop></d:propfind>")]+
		`<nc:trashbin-filename/><nc:trashbin-original-location/><nc:trashbin-deletion-time/></d:prop></d:propfind>`, "Depth", "1")
	if resp.StatusCode != 207 || !strings.Contains(body, "<nc:trashbin-filename>also-gone.txt</nc:trashbin-filename>") || !strings.Contains(body, "<oc:fileid>") {
		t.Errorf("the iOS trash:\n%.800s", body)
	}
	last := alsoHref[strings.LastIndex(alsoHref, "/")+1:]
	resp, body = ios.do("MOVE", alsoHref, "", "Destination", ios.base+"/remote.php/dav/trashbin/mia/restore/"+last, "Overwrite", "T")
	ios.want("the iOS trash restore", resp, body, 201)
	for _, name := range []string{"gone.txt", "also-gone.txt"} {
		if resp, _ := droid.do("GET", "/remote.php/dav/files/mia/"+name, ""); resp.StatusCode != 200 {
			t.Errorf("%s not back: %s", name, resp.Status)
		}
	}
	droid.do("DELETE", "/remote.php/dav/files/mia/gone.txt", "")
	if resp, _ := droid.do("DELETE", "/remote.php/dav/trashbin/mia/trash", ""); resp.StatusCode != 204 {
		t.Errorf("emptying the trash = %s, want 204", resp.Status)
	}
}

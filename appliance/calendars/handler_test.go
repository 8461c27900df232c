package calendars

import (
	"encoding/xml"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
)

const event = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:%s\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20261201T100000Z\r\nDTEND:20261201T110000Z\r\nSUMMARY:%s\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

func server(t *testing.T) (*httptest.Server, *Store) {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{Store: s, Log: slog.New(slog.DiscardHandler)}
	mux := front.NewRoutes(testDoor{})
	h.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, s
}

// testDoor lets in any user with the password "pw".
type testDoor struct{}

func (testDoor) Check(_ auth.Access, w http.ResponseWriter, r *http.Request) (auth.Caller, error) {
	u, p, ok := r.BasicAuth()
	if !ok || p != "pw" {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		http.Error(w, "login", http.StatusUnauthorized)
		return auth.Caller{}, auth.ErrAnswered
	}
	return auth.Caller{User: u}, nil
}

type client struct {
	t    *testing.T
	srv  *httptest.Server
	user string
}

func (c client) do(method, path, body string, hdr ...string) (int, string, http.Header) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.srv.URL+path, strings.NewReader(body))
	req.SetBasicAuth(c.user, "pw")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestDiscoveryAndSync(t *testing.T) {
	srv, _ := server(t)
	bob := client{t, srv, "bob"}
	code, _, hdr := bob.do("GET", "/.well-known/caldav", "")
	if code != 301 || hdr.Get("Location") != "/remote.php/dav/principals/users/bob/" {
		t.Fatalf("/.well-known/caldav = %d %s", code, hdr.Get("Location"))
	}
	code, body, _ := bob.do("PROPFIND", "/remote.php/dav/principals/users/bob/", `<propfind xmlns="DAV:"><prop><current-user-principal/><cal:calendar-home-set xmlns:cal="urn:ietf:params:xml:ns:caldav"/><A:addressbook-home-set xmlns:A="urn:ietf:params:xml:ns:carddav"/></prop></propfind>`, "Depth", "0")
	if code != 207 || !strings.Contains(body, "<d:href>/remote.php/dav/calendars/bob/</d:href>") || !strings.Contains(body, "/remote.php/dav/addressbooks/users/bob/") {
		t.Fatalf("principal PROPFIND = %d\n%s", code, body)
	}
	// The home lists the default calendar, made on first use.
	code, body, _ = bob.do("PROPFIND", "/remote.php/dav/calendars/bob/", `<propfind xmlns="DAV:"><prop><resourcetype/></prop></propfind>`, "Depth", "1")
	if code != 207 || !strings.Contains(body, "/remote.php/dav/calendars/bob/personal/") {
		t.Fatalf("home PROPFIND = %d\n%s", code, body)
	}
	cal := "/remote.php/dav/calendars/bob/personal/"
	ctag := func() (string, string) {
		_, b, _ := bob.do("PROPFIND", cal, `<propfind xmlns="DAV:" xmlns:cs="http://calendarserver.org/ns/"><prop><cs:getctag/><sync-token/></prop></propfind>`, "Depth", "0")
		m := regexp.MustCompile(`<cs:getctag>([^<]+)</cs:getctag><d:sync-token>([^<]+)</d:sync-token>`).FindStringSubmatch(b)
		if m == nil {
			t.Fatalf("no getctag and sync-token:\n%s", b)
		}
		return m[1], m[2]
	}
	c0, tok0 := ctag()
	code, _, hdr = bob.do("PUT", cal+"a.ics", strings.ReplaceAll(strings.ReplaceAll(event, "%s", "uid-a"), "SUMMARY:uid-a", "SUMMARY:first"), "Content-Type", "text/calendar", "If-None-Match", "*")
	etagA := hdr.Get("ETag")
	if code != 201 || etagA == "" {
		t.Fatalf("PUT = %d %q", code, etagA)
	}
	c1, tok1 := ctag()
	if c1 == c0 || tok1 == tok0 {
		t.Error("a PUT did not change getctag and the sync token")
	}
	if code, _, _ = bob.do("PUT", cal+"a.ics", strings.ReplaceAll(event, "%s", "uid-a"), "Content-Type", "text/calendar", "If-None-Match", "*"); code != 412 {
		t.Errorf("If-None-Match: * over an existing object = %d", code)
	}
	// Refused, nothing stored: a second object with the same UID, an
	// object that is not iCalendar, one too large.
	for what, tc := range map[string]struct{ body, want string }{
		"UID clash": {strings.ReplaceAll(event, "%s", "uid-a"), "no-uid-conflict"},
		"malformed": {"BEGIN:VCALENDAR\r\nthis is not\r\n", "valid-calendar-data"},
		// go-ical's decoder panics on it (found by FuzzObject).
		"a decoder's panic": {"0;0=", "valid-calendar-data"},
		"two kinds":         {strings.Replace(strings.ReplaceAll(event, "%s", "uid-x"), "END:VCALENDAR", "BEGIN:VTODO\r\nUID:t\r\nDTSTAMP:20260101T000000Z\r\nEND:VTODO\r\nEND:VCALENDAR", 1), "valid-calendar-data"},
		"too large":         {strings.ReplaceAll(event, "%s", strings.Repeat("x", 2<<20)), "max-resource-size"},
		// 40,000 nested components in 800 KB took 72 MB to parse.
		"nested deep": {"BEGIN:VCALENDAR\r\n" + strings.Repeat("BEGIN:X\r\n", 40000) + strings.Repeat("END:X\r\n", 40000) + "END:VCALENDAR\r\n", "nest more than 8 deep"},
		// The decoders take a parameter on BEGIN and unfold first.
		"nested, with parameters": {"BEGIN:VCALENDAR\r\n" + strings.Repeat("BEGIN;X=1:X\r\n", 100) + strings.Repeat("END:X\r\n", 100) + "END:VCALENDAR\r\n", "nest more than 8 deep"},
		"nested, folded":          {"BEGIN:VCALENDAR\r\n" + strings.Repeat("BEG\r\n IN:X\r\n", 100) + strings.Repeat("END:X\r\n", 100) + "END:VCALENDAR\r\n", "nest more than 8 deep"},
		"too many":                {strings.Replace(strings.ReplaceAll(event, "%s", "uid-m"), "END:VEVENT", "END:VEVENT"+strings.Repeat("\r\nBEGIN:VEVENT\r\nUID:uid-m\r\nDTSTAMP:20260101T000000Z\r\nRECURRENCE-ID:20260102T000000Z\r\nEND:VEVENT", 1001), 1), "more than 1000 components"},
	} {
		code, body, _ := bob.do("PUT", cal+"b.ics", tc.body, "Content-Type", "text/calendar")
		if code < 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: PUT = %d\n%.300s", what, code, body)
		}
	}
	if c, _ := ctag(); c != c1 {
		t.Error("a refused PUT changed the collection")
	}
	// Sync: from the old token, one change; from the new, nothing.
	report := func(tok string) string {
		_, b, _ := bob.do("REPORT", cal, `<sync-collection xmlns="DAV:"><sync-token>`+tok+`</sync-token><sync-level>1</sync-level><prop><getetag/></prop></sync-collection>`)
		return b
	}
	if b := report(tok0); !strings.Contains(b, cal+"a.ics") || !strings.Contains(b, etagA) || !strings.Contains(b, tok1) {
		t.Errorf("sync from the old token:\n%s", b)
	}
	if b := report(tok1); strings.Contains(b, "<d:response>") || !strings.Contains(b, tok1) {
		t.Errorf("sync with nothing new:\n%s", b)
	}
	if code, _, _ = bob.do("DELETE", cal+"a.ics", "", "If-Match", `"wrong"`); code != 412 {
		t.Errorf("DELETE with a stale If-Match = %d", code)
	}
	if code, _, _ = bob.do("DELETE", cal+"a.ics", "", "If-Match", etagA); code != 204 && code != 200 {
		t.Errorf("DELETE = %d", code)
	}
	if b := report(tok1); !strings.Contains(b, cal+"a.ics</d:href><d:status>HTTP/1.1 404") {
		t.Errorf("sync after a delete:\n%s", b)
	}
	code, body, _ = bob.do("REPORT", cal, `<sync-collection xmlns="DAV:"><sync-token>http://bonesync.invalid/ns/sync/999</sync-token><sync-level>1</sync-level><prop/></sync-collection>`)
	if code != 403 || !strings.Contains(body, "valid-sync-token") {
		t.Errorf("a token from the future = %d %s", code, body)
	}
	// MKCALENDAR makes another.
	if code, body, _ = bob.do("MKCALENDAR", "/remote.php/dav/calendars/bob/work/", `<cal:mkcalendar xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><d:displayname>Work</d:displayname></d:prop></d:set></cal:mkcalendar>`); code != 201 {
		t.Errorf("MKCALENDAR = %d %s", code, body)
	}
}

// Another user's homes, collections and objects are not found, on every
// path.
func TestOtherUsersUnseen(t *testing.T) {
	srv, _ := server(t)
	bob, eve := client{t, srv, "bob"}, client{t, srv, "eve"}
	bob.do("PUT", "/remote.php/dav/calendars/bob/personal/a.ics", strings.ReplaceAll(event, "%s", "u"), "Content-Type", "text/calendar")
	bob.do("PROPFIND", "/remote.php/dav/addressbooks/users/bob/", "", "Depth", "1")
	for _, p := range []string{"/remote.php/dav/principals/users/bob/", "/remote.php/dav/calendars/bob/", "/remote.php/dav/calendars/bob/personal/",
		"/remote.php/dav/calendars/bob/personal/a.ics", "/remote.php/dav/addressbooks/users/bob/", "/remote.php/dav/addressbooks/users/bob/contacts/"} {
		for _, m := range []string{"PROPFIND", "GET", "DELETE", "REPORT"} {
			if code, body, _ := eve.do(m, p, ""); code != 404 {
				t.Errorf("eve %s %s = %d %.200s", m, p, code, body)
			}
		}
	}
	if code, _, _ := eve.do("PUT", "/remote.php/dav/calendars/bob/personal/b.ics", strings.ReplaceAll(event, "%s", "v"), "Content-Type", "text/calendar"); code != 404 {
		t.Errorf("eve PUT into bob's calendar = %d", code)
	}
}

// What a power cut, an odd name or a remade collection must not break.
func TestChangeLogEdges(t *testing.T) {
	srv, s := server(t)
	bob := client{t, srv, "bob"}
	cal := "/remote.php/dav/calendars/bob/personal/"
	tokenOf := func() string {
		_, b, _ := bob.do("PROPFIND", cal, `<propfind xmlns="DAV:"><prop><sync-token/></prop></propfind>`, "Depth", "0")
		return regexp.MustCompile(`<d:sync-token>([^<]+)<`).FindStringSubmatch(b)[1]
	}
	if code, _, _ := bob.do("PROPFIND", "/remote.php/dav/calendars/bob/", "", "Depth", "1"); code != 207 {
		t.Errorf("PROPFIND without a body = %d, want 207 (allprop)", code)
	}
	tok := tokenOf()
	// A torn last line (a cut mid-append) hides nothing after it.
	dir := filepath.Join(s.dir, "bob", "calendars", "personal")
	f, _ := os.OpenFile(filepath.Join(dir, "changes"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	f.WriteString("7 pu")
	f.Close()
	// A name with a space, and a summary with a control character.
	bob.do("PUT", cal+"a%20b.ics", strings.Replace(strings.ReplaceAll(event, "%s", "sp"), "SUMMARY:sp", "SUMMARY:bell\\a", 1), "Content-Type", "text/calendar")
	_, body, _ := bob.do("REPORT", cal, `<sync-collection xmlns="DAV:"><sync-token>`+tok+`</sync-token><sync-level>1</sync-level><prop><getetag/><cal:calendar-data xmlns:cal="urn:ietf:params:xml:ns:caldav"/></prop></sync-collection>`)
	if !strings.Contains(body, cal+"a%20b.ics") {
		t.Errorf("a change after a torn line, to a name with a space:\n%s", body)
	}
	var ms struct{}
	if err := xml.Unmarshal([]byte(body), &ms); err != nil {
		t.Errorf("the sync answer is not XML: %v", err)
	}
	// A collection deleted and made again refuses the old token.
	old := tokenOf()
	if code, _, _ := bob.do("DELETE", cal, "", "If-Match", `"nope"`); code != 412 {
		t.Errorf("DELETE of the calendar with a wrong If-Match = %d", code)
	}
	if code, _, _ := bob.do("DELETE", cal, ""); code/100 != 2 {
		t.Errorf("DELETE of the calendar = %d", code)
	}
	bob.do("MKCALENDAR", cal, "")
	code, b, _ := bob.do("REPORT", cal, `<sync-collection xmlns="DAV:"><sync-token>`+old+`</sync-token><sync-level>1</sync-level><prop/></sync-collection>`)
	if code != 403 || !strings.Contains(b, "valid-sync-token") {
		t.Errorf("an old collection's token on the new one = %d %s", code, b)
	}
	// The store's own files are not objects.
	if code, _, _ := bob.do("DELETE", cal+"collection.json", ""); code != 404 {
		t.Errorf("DELETE collection.json = %d", code)
	}
}

// Extended MKCOL makes an address book; a time-range calendar-query and a
// text-match addressbook-query find what they should and only that.
func TestQueries(t *testing.T) {
	srv, _ := server(t)
	bob := client{t, srv, "bob"}
	book := "/remote.php/dav/addressbooks/users/bob/friends/"
	code, body, _ := bob.do("MKCOL", book, `<d:mkcol xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:set><d:prop><d:resourcetype><d:collection/><card:addressbook/></d:resourcetype><d:displayname>Friends</d:displayname></d:prop></d:set></d:mkcol>`)
	if code != 201 {
		t.Fatalf("extended MKCOL = %d %s", code, body)
	}
	for name, fn := range map[string]string{"ada.vcf": "Ada Lovelace", "alan.vcf": "Alan Turing"} {
		card := "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:" + name + "\r\nFN:" + fn + "\r\nEND:VCARD\r\n"
		if code, body, _ := bob.do("PUT", book+name, card, "Content-Type", "text/vcard"); code != 201 {
			t.Fatalf("PUT %s = %d %s", name, code, body)
		}
	}
	_, body, _ = bob.do("REPORT", book, `<card:addressbook-query xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><d:getetag/></d:prop><card:filter><card:prop-filter name="FN"><card:text-match collation="i;unicode-casemap" match-type="contains">lovelace</card:text-match></card:prop-filter></card:filter></card:addressbook-query>`, "Depth", "1")
	if !strings.Contains(body, "ada.vcf") || strings.Contains(body, "alan.vcf") {
		t.Errorf("text-match for lovelace:\n%s", body)
	}
	cal := "/remote.php/dav/calendars/bob/personal/"
	bob.do("PROPFIND", "/remote.php/dav/calendars/bob/", "", "Depth", "1") // the default calendar
	dec := strings.ReplaceAll(event, "%s", "december")
	jan := strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(event, "%s", "january"), "20261201T1", "20270115T1"), "20261201T1", "20270115T1")
	for name, ev := range map[string]string{"dec.ics": dec, "jan.ics": jan} {
		if code, body, _ := bob.do("PUT", cal+name, ev, "Content-Type", "text/calendar"); code != 201 {
			t.Fatalf("PUT %s = %d %s", name, code, body)
		}
	}
	_, body, _ = bob.do("REPORT", cal, `<cal:calendar-query xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><cal:filter><cal:comp-filter name="VCALENDAR"><cal:comp-filter name="VEVENT"><cal:time-range start="20270101T000000Z" end="20270201T000000Z"/></cal:comp-filter></cal:comp-filter></cal:filter></cal:calendar-query>`, "Depth", "1")
	if !strings.Contains(body, "jan.ics") || strings.Contains(body, "dec.ics") {
		t.Errorf("time-range January 2027:\n%s", body)
	}
	_, body, _ = bob.do("REPORT", cal, `<cal:calendar-multiget xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><cal:calendar-data/></d:prop><d:href>`+cal+`dec.ics</d:href></cal:calendar-multiget>`, "Depth", "1")
	if !strings.Contains(body, "UID:december") || strings.Contains(body, "UID:january") {
		t.Errorf("calendar-multiget of dec.ics:\n%s", body)
	}
}

// Objects count against the room the store is given (the quota the
// user's files share, the disk): 0.9 MiB events under a 1 MiB budget stop
// at the first that does not fit, with 507, and nothing is written; an
// object made smaller always fits (they were stored without bound).
func TestObjectsNeedRoom(t *testing.T) {
	srv, s := server(t)
	const budget = 1 << 20
	var asked []int64
	s.Room = func(user string, used, grow int64) (string, error) {
		asked = append(asked, grow)
		if used+grow > budget {
			return "over your quota", nil
		}
		return "", nil
	}
	bob := client{t, srv, "bob"}
	cal := "/remote.php/dav/calendars/bob/personal/"
	bob.do("PROPFIND", "/remote.php/dav/calendars/bob/", "", "Depth", "1")
	big := func(uid string, n int) string {
		desc := "DESCRIPTION:x" + strings.Repeat("\r\n "+strings.Repeat("x", 70), n) + "\r\n"
		return strings.Replace(strings.ReplaceAll(event, "%s", uid), "SUMMARY:", desc+"SUMMARY:", 1)
	}
	if code, body, _ := bob.do("PUT", cal+"a.ics", big("a", 12000), "Content-Type", "text/calendar"); code != 201 {
		t.Fatalf("the first 0.9 MiB event = %d %s", code, body)
	}
	code, _, _ := bob.do("PUT", cal+"b.ics", big("b", 12000), "Content-Type", "text/calendar")
	if code != http.StatusInsufficientStorage {
		t.Errorf("a second 0.9 MiB event in a 1 MiB budget = %d, want 507", code)
	}
	if code, _, _ := bob.do("GET", cal+"b.ics", ""); code != 404 {
		t.Errorf("the refused event is there: %d", code)
	}
	if code, _, _ := bob.do("PUT", cal+"a.ics", big("a", 10), "Content-Type", "text/calendar"); code/100 != 2 {
		t.Errorf("the event made smaller = %d", code)
	}
	if code, body, _ := bob.do("PUT", cal+"b.ics", big("b", 12000), "Content-Type", "text/calendar"); code != 201 {
		t.Errorf("with room again, the second event = %d %s", code, body)
	}
	if len(asked) != 3 || asked[0] < 800<<10 {
		t.Errorf("room asked for %v (growths; the shrink needs none)", asked)
	}
}

// Objects are parsed one request at a time, but a client that sends its
// body slowly holds no one's turn: another PUT goes through meanwhile.
func TestSlowBodyHoldsNoTurn(t *testing.T) {
	srv, _ := server(t)
	bob := client{t, srv, "bob"}
	cal := "/remote.php/dav/calendars/bob/personal/"
	bob.do("PROPFIND", "/remote.php/dav/calendars/bob/", "", "Depth", "1")
	stall := make(chan struct{})
	defer close(stall)
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte("BEGIN:VCALENDAR\r\n"))
		<-stall
		pw.CloseWithError(io.ErrUnexpectedEOF)
	}()
	slow, _ := http.NewRequest("PUT", srv.URL+cal+"slow.ics", pr)
	slow.SetBasicAuth("bob", "pw")
	go http.DefaultClient.Do(slow)
	time.Sleep(100 * time.Millisecond)
	done := make(chan int, 1)
	go func() {
		code, _, _ := bob.do("PUT", cal+"b.ics", strings.ReplaceAll(event, "%s", "b"), "Content-Type", "text/calendar")
		done <- code
	}()
	select {
	case code := <-done:
		if code != 201 {
			t.Errorf("the PUT beside a slow one = %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a PUT waited behind a client sending its body slowly")
	}
}

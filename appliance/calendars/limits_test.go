package calendars

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/front"
)

// handler is a Handler on a fresh store drawing from mem, driven in
// process (httptest.NewRecorder) so that what it allocates can be counted.
func handler(t *testing.T, mem *budget.Budget) *Handler {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Memory = mem
	return &Handler{Store: s, Log: slog.New(slog.DiscardHandler)}
}

func put(h *Handler, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("PUT", path, strings.NewReader(body))
	req.SetBasicAuth("bob", "pw")
	req.Header.Set("Content-Type", "text/calendar")
	rec := httptest.NewRecorder()
	rs := front.NewRoutes(testDoor{})
	h.Routes(rs)
	rs.ServeHTTP(rec, req)
	return rec
}

// Objects too complex to parse within the box are refused before a
// parser sees them, with the precondition and what passed the limit.
func TestShapeRefusedBeforeParsing(t *testing.T) {
	h := handler(t, nil)
	head := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTAMP:20260101T000000Z\r\n"
	tail := "END:VEVENT\r\nEND:VCALENDAR\r\n"
	for what, tc := range map[string]struct{ body, want string }{
		"80,000 properties":    {head + strings.Repeat("X-A:b\r\n", 80000) + tail, "more than 10000 properties"},
		"60,000 parameters":    {head + "X-A" + strings.Repeat(";P=a", 60000) + ":v\r\n" + tail, "more than 100 parameters"},
		"a list of 60,000":     {head + "X-A;P=" + strings.Repeat("a,", 60000) + "a:v\r\n" + tail, "more than 100 parameters"},
		"a 100 kB parameter":   {head + "X-A;P=" + strings.Repeat("a", 100000) + ":v\r\n" + tail, "longer than 1024 bytes"},
		"folded parameters":    {head + "X-A" + strings.Repeat(";P=a\r\n ", 200) + ":v\r\n" + tail, "more than 100 parameters"},
		"a quoted one, folded": {head + `X-A;P="` + strings.Repeat("a\r\n ", 2000) + `":v` + "\r\n" + tail, "longer than 1024 bytes"},
		"long values in all":   {head + strings.Repeat("X;A="+strings.Repeat("a", 1000)+":\r\n", 900) + tail, "parameter values too long in all"},
	} {
		var rec *httptest.ResponseRecorder
		n := allocated(func() { rec = put(h, "/remote.php/dav/calendars/bob/personal/a.ics", tc.body) })
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "valid-calendar-data") || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("PUT of %s = %d %.300s, want 403 valid-calendar-data %q", what, rec.Code, rec.Body.String(), tc.want)
		}
		// The body read (grown as it comes) and nothing parsed: go-ical
		// took 38 bytes a byte of the first.
		if limit := 4*uint64(len(tc.body)) + 1<<20; n > limit {
			t.Errorf("PUT of %s (%d bytes) allocated %d kB, want at most %d", what, len(tc.body), n>>10, limit>>10)
		}
	}
	// At the limits, a flat object is taken.
	if rec := put(h, "/remote.php/dav/calendars/bob/personal/b.ics", head+strings.Repeat("X-A;P=a,b;Q=c:b\r\n", 9000)+tail); rec.Code != http.StatusCreated {
		t.Errorf("PUT of 9,000 properties = %d %s, want 201", rec.Code, rec.Body.String())
	}
}

// PUTs at once draw from one budget: those it has no room for wait, past
// the queue they get 503 with Retry-After, and the waiting go on when
// room is given back.
func TestPutsDrawFromBudget(t *testing.T) {
	body := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:%d\r\nDTSTAMP:20260101T000000Z\r\n" + strings.Repeat("X-A:b\r\n", 9000) + "END:VEVENT\r\nEND:VCALENDAR\r\n"
	sh, _ := checkShape([]byte(fmt.Sprintf(body, 1)))
	mem := budget.New(putCost(sh)*3/2, budget.Options{MaxWaiting: 2})
	h := handler(t, mem)
	hold, err := mem.Take(context.Background(), "test", putCost(sh)*3/2)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	recs := make([]*httptest.ResponseRecorder, 4)
	for i := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i] = put(h, fmt.Sprintf("/remote.php/dav/calendars/bob/personal/%d.ics", i), fmt.Sprintf(body, i))
		}()
	}
	for st := mem.Stats(); st.Waiting < 2 || refused(st, "calendar-put") < 2; st = mem.Stats() {
		time.Sleep(time.Millisecond) // until two wait and two were refused
	}
	hold()
	wg.Wait()
	codes := map[int]int{}
	for _, rec := range recs {
		codes[rec.Code]++
		if rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "" {
			t.Error("a 503 without Retry-After")
		}
	}
	if codes[http.StatusCreated] != 2 || codes[http.StatusServiceUnavailable] != 2 {
		t.Errorf("four PUTs at once, room for one, two waiting = %v, want two 201 and two 503", codes)
	}
	if st := mem.Stats(); st.InUse != 0 {
		t.Errorf("budget in use after the PUTs = %d, want 0", st.InUse)
	}
}

// An object under the size limit is taken with the box's own budget, even
// one whose estimate is more than all of it (it runs alone): a 900 KB
// attachment (or a contact's photo) once got 507.
func TestLargeObjectUnderTheLimitTaken(t *testing.T) {
	mem := budget.New(budget.Admission, budget.Options{})
	h := handler(t, mem)
	photo := strings.Repeat("QUJD", 900<<10/4)
	var card strings.Builder
	card.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:p\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260101T000000Z\r\n" +
		"ATTACH;ENCODING=BASE64;VALUE=BINARY;FMTTYPE=image/jpeg:")
	for i := 0; i < len(photo); i += 74 { // folded as clients fold
		card.WriteString(photo[i:min(i+74, len(photo))] + "\r\n ")
	}
	card.WriteString("\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	sh, err := checkShape([]byte(card.String()))
	if err != nil || putCost(sh) <= budget.Admission {
		t.Fatalf("the test card: %v, costs %d; want more than the budget", err, putCost(sh))
	}
	if rec := put(h, "/remote.php/dav/calendars/bob/personal/p.ics", card.String()); rec.Code != http.StatusCreated {
		t.Errorf("PUT of a %d KB event = %d %.300s, want 201", card.Len()>>10, rec.Code, rec.Body.String())
	}
}

func refused(st budget.Stats, kind string) int64 {
	for _, k := range st.Kinds {
		if k.Kind == kind {
			return k.Refused
		}
	}
	return 0
}

// Dates are kept only where every reader takes them back: years
// 0001-9999. Year 9999 is stored and read back; year 0 is refused, naming
// the property.
func TestDates(t *testing.T) {
	srv, _ := server(t)
	bob := client{t, srv, "bob"}
	cal := "/remote.php/dav/calendars/bob/personal/"
	late := strings.NewReplacer("DTSTART:20261201T100000Z", "DTSTART:99991231T100000Z", "DTEND:20261201T110000Z", "DTEND:99991231T235959Z").Replace(fmt.Sprintf(event, "late", "late"))
	if code, b, _ := bob.do("PUT", cal+"late.ics", late, "Content-Type", "text/calendar"); code != 201 {
		t.Fatalf("PUT of year 9999 = %d %s, want 201", code, b)
	}
	if code, b, _ := bob.do("GET", cal+"late.ics", ""); code != 200 || !strings.Contains(b, "DTSTART:99991231T100000Z") {
		t.Errorf("GET of year 9999 = %d %s", code, b)
	}
	if code, b, _ := bob.do("REPORT", cal, timeQuery("99991231T000000Z", "99991231T235959Z"), "Depth", "1"); code != 207 || !strings.Contains(b, "late.ics") {
		t.Errorf("calendar-query in year 9999 = %d %s", code, b)
	}
	for what, tc := range map[string]struct{ from, to, want string }{
		"year 0":           {"DTSTART:20261201T100000Z", "DTSTART:00001201T100000Z", "DTSTART"},
		"month 13":         {"DTEND:20261201T110000Z", "DTEND:20261301T110000Z", "DTEND"},
		"UNTIL in year 0":  {"SUMMARY:", "RRULE:FREQ=DAILY;UNTIL=00000101T000000Z\r\nSUMMARY:", "RRULE"},
		"an EXDATE, later": {"SUMMARY:", "EXDATE:20261202T100000Z,1X\r\nSUMMARY:", "EXDATE"},
		"LAST-MODIFIED":    {"SUMMARY:", "LAST-MODIFIED:100000101T000000Z\r\nSUMMARY:", "LAST-MODIFIED"},
	} {
		body := strings.Replace(fmt.Sprintf(event, "d", "d"), tc.from, tc.to, 1)
		code, b, _ := bob.do("PUT", cal+"d.ics", body, "Content-Type", "text/calendar")
		if code != 403 || !strings.Contains(b, "valid-calendar-data") || !strings.Contains(b, tc.want) {
			t.Errorf("PUT with %s = %d %s, want 403 valid-calendar-data naming %s", what, code, b, tc.want)
		}
	}
}

// parseCost holds above what go-ical and go-vcard allocate, for objects of
// each shape the limits allow.
func TestParseCost(t *testing.T) {
	head := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:a\r\nDTSTAMP:20260101T000000Z\r\n"
	tail := "END:VEVENT\r\nEND:VCALENDAR\r\n"
	card := "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:a\r\n"
	for what, body := range map[string]string{
		"an event":                 fmt.Sprintf(event, "a", "a"),
		"10,000 short properties":  head + strings.Repeat("X:\r\n", 9990) + tail,
		"100 parameters":           head + "X-A" + strings.Repeat(";A=b", 100) + ":v\r\n" + tail,
		"parameters on every line": head + strings.Repeat("X;A=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p:\r\n", 9990) + tail,
		"long parameter values":    head + strings.Repeat("X;A="+strings.Repeat("a", 1000)+":\r\n", 12) + tail,
		"1,000 components":         "BEGIN:VCALENDAR\r\n" + strings.Repeat("BEGIN:VEVENT\r\nUID:a\r\nEND:VEVENT\r\n", 999) + "END:VCALENDAR\r\n",
		"a long description":       head + "DESCRIPTION:" + strings.Repeat("abcdefghij", 100000) + "\r\n" + tail,
		"a card of short fields":   card + strings.Repeat("X:\r\n", 9990) + "END:VCARD\r\n",
		"a card's parameters":      card + strings.Repeat("X;A=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p:\r\n", 9990) + "END:VCARD\r\n",
		"a card's photo, unfolded": card + "PHOTO:" + strings.Repeat("abcdefghij", 100000) + "\r\nEND:VCARD\r\n",
	} {
		sh, err := checkShape([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		n := allocated(func() {
			if strings.HasPrefix(body, "BEGIN:VCARD") {
				decodeCard([]byte(body))
			} else {
				decodeCalendar([]byte(body))
			}
		})
		// go-ical's copies of parameter values are garbage at once: time,
		// not memory held, and bounded apart (maxParamCopies).
		if est := parseCost(sh); uint64(est+sh.copies) < n {
			t.Errorf("parseCost(%s) = %d (and %d of copies), below the %d bytes the parse allocated", what, est, sh.copies, n)
		}
		t.Logf("%s: %d bytes, %d allocated (%.1f a byte), estimate %d", what, len(body), n, float64(n)/float64(len(body)), parseCost(sh))
	}
}

// A multiget's draw counts the objects it names: those of the collection
// asked at their size, any other (another collection's, for all the
// draw knows) at the most an object can be.
func TestMultigetCost(t *testing.T) {
	h := handler(t, budget.New(budget.Admission, budget.Options{}))
	event := fmt.Sprintf(secondly, "FREQ=DAILY")
	if rec := put(h, "/remote.php/dav/calendars/bob/personal/a%20b.ics", event); rec.Code != http.StatusCreated {
		t.Fatalf("PUT = %d %s", rec.Code, rec.Body.String())
	}
	tgt := target{kind: Calendars, owner: "bob", ocoll: "personal"}
	body := func(hrefs ...string) []byte {
		var b strings.Builder
		b.WriteString(`<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop>`)
		for _, h := range hrefs {
			b.WriteString("<d:href>" + h + "</d:href>")
		}
		b.WriteString("</c:calendar-multiget>")
		return []byte(b.String())
	}
	own := h.Store.reportCost(tgt, body("/remote.php/dav/calendars/bob/personal/a%20b.ics"))
	if want := int64(len(event)) * readCostPerByte; own != want {
		t.Errorf("a multiget of its own object (an escaped name) costs %d, want %d", own, want)
	}
	other := h.Store.reportCost(tgt, body("/remote.php/dav/calendars/bob/other/x.ics", "/remote.php/dav/calendars/bob/other/y.ics"))
	if want := 2 * h.Store.Limits.Object * readCostPerByte; other != want {
		t.Errorf("a multiget of two objects elsewhere costs %d, want %d", other, want)
	}
}

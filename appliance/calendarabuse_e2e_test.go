package main

// The calendars' answers to an attacker, on the real binary: a recurrence
// that never ends, queried as every phone queries, and objects built to
// make the parser allocate, four at once. The box stays under its 48 MB.

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// testCalendarAbuse runs in TestSync's box, its peak reset first: what
// it measures is this scenario's.
func testCalendarAbuse(t *testing.T, b *box) {
	resetPeak(t, b.cmd.Process.Pid)
	cal := "https://localhost:" + b.port(b.https) + "/remote.php/dav/calendars/admin/personal/"
	event := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:s\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260101T000000Z\r\nRRULE:FREQ=SECONDLY\r\nSUMMARY:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	if code, out := b.curl("-u", b.admin(), "-H", "Content-Type: text/calendar", "--data-binary", event, "-X", "PUT", cal+"s.ics"); code != 201 {
		t.Fatalf("PUT of the SECONDLY event = %d %s", code, out)
	}
	query := `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20261201T000000Z" end="20270101T000000Z"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`
	code, out := b.curl("-u", b.admin(), "-X", "REPORT", "-H", "Depth: 1", "-H", "Content-Type: application/xml", "--max-time", "60", "--data", query, cal)
	if code != 207 || !strings.Contains(out, "s.ics") {
		t.Errorf("calendar-query over the SECONDLY event = %d %s, want 207 naming it", code, out)
	}
	defer b.curl("-u", b.admin(), "-X", "DELETE", cal+"s.ics") // the other clients' calendars stay as they were
	hwm := statusKB(t, b.cmd.Process.Pid, "VmHWM")
	t.Logf("peak resident set after the query: %.1f MB", float64(hwm)/1000)
	if hwm > 48000 {
		t.Errorf("peak resident set %d kB after the SECONDLY query, over 48 MB", hwm)
	}

	// Four PUTs at once of 80,000 properties each: refused unparsed.
	flat := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:%d\r\nDTSTAMP:20260101T000000Z\r\n" + strings.Repeat("X-A:b\r\n", 80000) + "END:VEVENT\r\nEND:VCALENDAR\r\n"
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var wg sync.WaitGroup
	codes := make([]string, 4)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("PUT", fmt.Sprintf("%sflat%d.ics", cal, i), strings.NewReader(fmt.Sprintf(flat, i)))
			req.SetBasicAuth("admin", b.password)
			req.Header.Set("Content-Type", "text/calendar")
			resp, err := c.Do(req)
			if err != nil {
				codes[i] = err.Error()
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			codes[i] = fmt.Sprintf("%d %s", resp.StatusCode, body)
		}()
	}
	wg.Wait()
	for i, got := range codes {
		if !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "more than 10000 properties") {
			t.Errorf("PUT %d of 80,000 properties = %.200s, want 403 valid-calendar-data", i+1, got)
		}
	}
	hwm = statusKB(t, b.cmd.Process.Pid, "VmHWM")
	t.Logf("peak resident set after the four PUTs: %.1f MB", float64(hwm)/1000)
	if hwm > 48000 {
		t.Errorf("peak resident set %d kB after four PUTs of 80,000 properties, over 48 MB", hwm)
	}
}

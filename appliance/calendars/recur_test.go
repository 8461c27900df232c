package calendars

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-webdav/caldav"
	"github.com/teambition/rrule-go"
)

// secondly is the attacker's event: under 200 bytes that recur every second.
const secondly = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:s\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:20260101T000000Z\r\nRRULE:%s\r\nSUMMARY:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

// timeQuery is what every phone sends: the events of a range.
func timeQuery(from, to string) string {
	return `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="` + from + `" end="` + to + `"/></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`
}

// allocated is the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A recurrence's expansion is bounded in instances and work: the rules an
// attacker writes answer at once, from little memory, and correctly where
// an answer is known.
func TestRecurrenceBounded(t *testing.T) {
	srv, _ := server(t)
	bob := client{t, srv, "bob"}
	cal := "/remote.php/dav/calendars/bob/personal/"
	for _, tc := range []struct {
		rule, from, to string
		want           bool // the object in the answer
	}{
		{"FREQ=SECONDLY", "20261201T000000Z", "20270101T000000Z", true},
		{"FREQ=SECONDLY;UNTIL=99991231T235959Z", "99991201T000000Z", "99991231T000000Z", true},
		{"FREQ=SECONDLY;COUNT=2000000000", "20261201T000000Z", "20270101T000000Z", true}, // past the bound: matched unexpanded
		{"FREQ=SECONDLY;COUNT=10", "20261201T000000Z", "20270101T000000Z", false},
		// rrule-go loops forever in one call on this one (INTERVAL=2 never reaches an odd second).
		{"FREQ=SECONDLY;INTERVAL=2;BYSECOND=1", "20261201T000000Z", "20270101T000000Z", true},
		// Never yields (there is no 30 February): walked to the bound, then matched.
		{"FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "00010101T000000Z", "99991231T000000Z", true},
		{"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30;COUNT=1", "20261201T000000Z", "20270101T000000Z", false},
		{"FREQ=MINUTELY;BYSETPOS=1,2,3,-1;BYHOUR=1,2,3;BYMINUTE=1,2,3,4,5", "20261201T000000Z", "20270101T000000Z", true},
		{"FREQ=WEEKLY;BYDAY=MO", "20261207T000000Z", "20261207T000001Z", true},  // a Monday
		{"FREQ=WEEKLY;BYDAY=MO", "20261208T000001Z", "20261214T000000Z", false}, // Tuesday to Sunday
	} {
		body := fmt.Sprintf(secondly, tc.rule)
		if code, b, _ := bob.do("PUT", cal+"s.ics", body, "Content-Type", "text/calendar"); code != 201 && code != 204 {
			t.Fatalf("PUT %s = %d %s", tc.rule, code, b)
		}
		var code int
		var answer string
		n := allocated(func() { code, answer, _ = bob.do("REPORT", cal, timeQuery(tc.from, tc.to), "Depth", "1") })
		if got := strings.Contains(answer, cal+"s.ics"); code != 207 || got != tc.want {
			t.Errorf("calendar-query %s .. %s over RRULE:%s = %d, object in it %v, want 207 and %v\n%s", tc.from, tc.to, tc.rule, code, got, tc.want, answer)
		}
		if n > 16<<20 {
			t.Errorf("calendar-query over RRULE:%s allocated %d MB, want at most 16", tc.rule, n>>20)
		}
		t.Logf("RRULE:%s: %d kB allocated", tc.rule, n>>10)
	}
}

// The time-range test is RFC 4791 9.9's, over instances, exceptions and
// added dates.
func TestTimeRange(t *testing.T) {
	const ev = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:w\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;TZID=Europe/Paris:20260105T100000\r\nDTEND;TZID=Europe/Paris:20260105T110000\r\n%s\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	for _, tc := range []struct {
		extra, from, to string
		want            bool
	}{
		{"RRULE:FREQ=WEEKLY", "20260112T093000Z", "20260112T094000Z", true}, // 10:30 Paris, inside the second instance
		{"RRULE:FREQ=WEEKLY", "20260112T100000Z", "20260112T110000Z", false},
		{"RRULE:FREQ=WEEKLY\r\nEXDATE;TZID=Europe/Paris:20260112T100000", "20260112T093000Z", "20260112T094000Z", false},
		{"RRULE:FREQ=WEEKLY;UNTIL=20260106T000000Z", "20260112T093000Z", "20260112T094000Z", false},
		{"RDATE:20260301T120000Z,20260401T120000Z", "20260401T121500Z", "20260401T121600Z", true},
		{"RDATE:20260301T120000Z", "20260401T121500Z", "20260401T121600Z", false},
		{"RRULE:FREQ=DAILY;INTERVAL=3", "20300101T000000Z", "20300102T000000Z", false}, // 2030-01-01 is 1457 days on: not a multiple of 3
		{"RRULE:FREQ=DAILY;INTERVAL=3", "20300102T000000Z", "20300103T000000Z", true},
		{"RRULE:FREQ=MONTHLY;BYDAY=-1FR", "20290330T080000Z", "20290330T090000Z", true}, // the last Friday of March 2029, summer time: 10:00 Paris is 08:00 UTC
		{"RRULE:FREQ=MONTHLY;BYDAY=-1FR", "20290323T080000Z", "20290323T090000Z", false},
	} {
		cal, err := decodeCalendar([]byte(fmt.Sprintf(ev, tc.extra)))
		if err != nil {
			t.Fatal(err)
		}
		from, _ := time.Parse("20060102T150405Z", tc.from)
		to, _ := time.Parse("20060102T150405Z", tc.to)
		x := newExpansion(context.Background())
		x.zones = zones{}
		f := caldav.CompFilter{Name: "VCALENDAR", Comps: []caldav.CompFilter{{Name: "VEVENT", Start: from, End: to}}}
		if got, err := x.match(f, cal.Component); got != tc.want || err != nil || x.guessed != 0 {
			t.Errorf("match(%s, %s .. %s) = %v, %v (%d guessed), want %v", tc.extra, tc.from, tc.to, got, err, x.guessed, tc.want)
		}
	}
}

// A query whose request has ended stops with the context's error, before
// it expands anything.
func TestQueryCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	objs := []Object{{Name: "s.ics", Data: []byte(fmt.Sprintf(secondly, "FREQ=SECONDLY"))}}
	f := caldav.CompFilter{Name: "VCALENDAR", Comps: []caldav.CompFilter{{Name: "VEVENT", Start: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}}}
	decode := func(o *Object) (*caldav.CalendarObject, error) {
		cal, err := decodeCalendar(o.Data)
		return &caldav.CalendarObject{Data: cal}, err
	}
	if _, _, err := query(ctx, f, objs, decode); !errors.Is(err, context.Canceled) {
		t.Errorf("query with a cancelled context = %v, want %v", err, context.Canceled)
	}
	// And mid-way: the expansion reads the context between windows.
	x := newExpansion(ctx)
	cal, _ := decodeCalendar(objs[0].Data)
	sp, _ := x.spanOf(cal.Children[0])
	if _, err := x.ruleOccurs(sp, func(time.Time) bool { return false }, time.Time{}, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ruleOccurs with a cancelled context = %v, want %v", err, context.Canceled)
	}
}

// A rule finer than a day is expanded when it reaches a time of day its
// limiting lists allow: BYMINUTE expands an HOURLY rule (10:15 from a
// 10:00 start, as rrule-go gives), and limits a MINUTELY one.
func TestReachable(t *testing.T) {
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		rule string
		want bool
	}{
		{"FREQ=HOURLY;BYMINUTE=15", true},
		{"FREQ=HOURLY;INTERVAL=2;BYHOUR=11", false},
		{"FREQ=HOURLY;INTERVAL=2;BYHOUR=12", true},
		{"FREQ=MINUTELY;INTERVAL=30;BYMINUTE=15", false},
		{"FREQ=MINUTELY;BYSECOND=30", true},
		{"FREQ=SECONDLY;INTERVAL=2;BYSECOND=1", false},
	} {
		o, err := rrule.StrToROption(c.rule)
		if err != nil {
			t.Fatal(err)
		}
		o.Dtstart = start
		if got := reachable(*o); got != c.want {
			t.Errorf("reachable(%s) = %v, want %v", c.rule, got, c.want)
		}
	}
}

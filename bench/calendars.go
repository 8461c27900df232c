package main

// The calendar figures: a phone's poll of a calendar of 5,000 events with
// the sync-collection REPORT, with nothing new and with one change: the
// time and the server's CPU (no peer: none of the CalDAV servers a user
// would pick instead is a Debian package here).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/calendars"
	"github.com/bonesync/bonesync/appliance/measure"
)

const pollEvents = 5000

// populateCalendar writes pollEvents events into syncUser's default
// calendar through the store, before the server starts.
func populateCalendar(files string) error {
	s, err := calendars.Open(files)
	if err != nil {
		return err
	}
	if err := s.EnsureDefault(calendars.Calendars, syncUser); err != nil {
		return err
	}
	for i := range pollEvents {
		uid := fmt.Sprintf("bench-%05d", i)
		ev := fmt.Sprintf("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bonesync bench//EN\r\nBEGIN:VEVENT\r\nUID:%s\r\nDTSTAMP:20260101T000000Z\r\n"+
			"DTSTART:2026%02d%02dT%02d0000Z\r\nDURATION:PT1H\r\nSUMMARY:Event %d\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", uid, 1+i%12, 1+i%28, i%24, i)
		if _, _, err := s.Put(calendars.Calendars, syncUser, calendars.DefaultCalendar, uid+".ics", uid, []byte(ev), calendars.Conditions{}); err != nil {
			return err
		}
	}
	return nil
}

// syncReport runs a sync-collection REPORT from token and returns the
// new token and the number of changed objects.
func syncReport(c *http.Client, url, token string) (string, int, error) {
	body := `<?xml version="1.0"?><d:sync-collection xmlns:d="DAV:"><d:sync-token>` + token +
		`</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`
	req, _ := http.NewRequest("REPORT", url, strings.NewReader(body))
	req.SetBasicAuth(syncUser, syncPass)
	req.Header.Set("Content-Type", "application/xml")
	resp, err := c.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 207 {
		return "", 0, fmt.Errorf("REPORT sync-collection = %s", resp.Status)
	}
	m := regexp.MustCompile(`<d:sync-token>([^<]+)</d:sync-token>`).FindSubmatch(b)
	if m == nil {
		return "", 0, fmt.Errorf("no sync-token in the answer")
	}
	return string(m[1]), strings.Count(string(b), "<d:response>"), err
}

// pollFigures is the median, over five runs of pollBatch polls from
// token (which must each find want changes), of the wall time and the
// server's CPU per poll: one poll takes less than the kernel's 10 ms CPU
// tick.
func pollFigures(ctx context.Context, s *server, c *http.Client, url, token string, want int) (propFigures, error) {
	const pollBatch = 50
	var f propFigures
	if _, _, err := syncReport(c, url, token); err != nil { // unmeasured
		return f, err
	}
	var walls, cpus []time.Duration
	for i := 0; i < 5 && ctx.Err() == nil; i++ {
		settle(s)
		cpu0, _ := treeCPU(s.pid())
		t0 := time.Now()
		for range pollBatch {
			_, n, err := syncReport(c, url, token)
			if err != nil {
				return f, err
			}
			if n != want {
				return f, fmt.Errorf("a poll found %d changes, want %d", n, want)
			}
		}
		walls = append(walls, time.Since(t0)/pollBatch)
		settle(s)
		cpu1, _ := treeCPU(s.pid())
		cpus = append(cpus, (cpu1-cpu0)/pollBatch)
	}
	f.Wall, f.CPU = measure.Percentile(walls, 50), measure.Percentile(cpus, 50)
	return f, ctx.Err()
}

// calendarPolls measures the two polls on the running server.
func calendarPolls(ctx context.Context, o *options, bs *server, c *http.Client, base string, res *syncResult) error {
	url := base + "/remote.php/dav/calendars/" + syncUser + "/" + calendars.DefaultCalendar + "/"
	token, n, err := syncReport(c, url, "")
	if err != nil {
		return err
	}
	if n != pollEvents {
		return fmt.Errorf("the first sync listed %d events, want %d", n, pollEvents)
	}
	if res.PollNothing, err = pollFigures(ctx, bs, c, url, token, 0); err != nil {
		return err
	}
	ev := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bonesync bench//EN\r\nBEGIN:VEVENT\r\nUID:bench-00007\r\nDTSTAMP:20260101T000000Z\r\n" +
		"DTSTART:20260301T100000Z\r\nDURATION:PT1H\r\nSUMMARY:Moved\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	req, _ := http.NewRequest("PUT", url+"bench-00007.ics", strings.NewReader(ev))
	req.SetBasicAuth(syncUser, syncPass)
	req.Header.Set("Content-Type", "text/calendar")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("PUT of the changed event = %s", resp.Status)
	}
	if res.PollOne, err = pollFigures(ctx, bs, c, url, token, 1); err != nil {
		return err
	}
	o.logf("calendars: sync-collection poll of %d events: nothing new %.2f ms (CPU %.2f ms), one change %.2f ms (CPU %.2f ms)",
		pollEvents, ms(res.PollNothing.Wall), ms(res.PollNothing.CPU), ms(res.PollOne.Wall), ms(res.PollOne.CPU))
	return nil
}

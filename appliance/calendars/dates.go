package calendars

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	"github.com/bonesync/bonesync/appliance/state"
)

// The properties whose values are dates or date-times this package reads
// or a client reads back as times.
var dateProps = []string{ical.PropDateTimeStart, ical.PropDateTimeEnd, ical.PropDue, ical.PropRecurrenceID,
	ical.PropExceptionDates, ical.PropRecurrenceDates, ical.PropDateTimeStamp, ical.PropCreated,
	ical.PropLastModified, ical.PropCompleted}

// errDate is wrapped by the refusals of checkDates.
var errDate = errors.New("not a date this calendar can keep")

// checkDates refuses, naming the property, a date or date-time an object's
// components carry that does not parse, or whose year is outside
// 0001-9999 (RFC 5545's four digits, and what every reader of a time
// here, JSON's included, can take back), and a recurrence rule that does
// not parse or ends outside those years. Time zone definitions
// (VTIMEZONE) are left to the clients that read them.
func checkDates(c *ical.Component) error { return zones{}.check(c) }

// check is checkDates with the object's time zones looked up once.
func (z zones) check(c *ical.Component) error {
	if c.Name == ical.CompTimezone {
		return nil
	}
	for _, name := range dateProps {
		for _, p := range c.Props[name] {
			for _, v := range strings.Split(p.Value, ",") {
				if _, err := parseTime(&p, v, z); err != nil {
					return fmt.Errorf("%s in %s: %w", name, c.Name, err)
				}
			}
		}
	}
	for _, p := range c.Props[ical.PropRecurrenceRule] {
		if _, err := parseRule(p.Value, time.UTC); err != nil {
			return fmt.Errorf("%s in %s: %w", ical.PropRecurrenceRule, c.Name, err)
		}
	}
	for _, child := range c.Children {
		if err := z.check(child); err != nil {
			return err
		}
	}
	return nil
}

// parseRule reads an RRULE's value, its local times (UNTIL) in loc.
func parseRule(v string, loc *time.Location) (*rrule.ROption, error) {
	o, err := rrule.StrToROptionInLocation(v, loc)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", errDate, v, err)
	}
	if err := state.Storable("UNTIL", o.Until); err != nil {
		return nil, fmt.Errorf("%w: %v", errDate, err)
	}
	return o, nil
}

// zones are the time zones of one object's TZIDs, each looked up once.
type zones map[string]*time.Location

// maxZones is how many distinct TZIDs of one object are looked up; the
// rest are read as UTC (an hour or so off, never refused).
const maxZones = 16

func (z zones) location(tzid string) *time.Location {
	if tzid == "" {
		return time.UTC
	}
	if loc, ok := z[tzid]; ok {
		return loc
	}
	if len(z) >= maxZones {
		return time.UTC
	}
	loc, err := time.LoadLocation(strings.TrimPrefix(tzid, "/"))
	if err != nil {
		loc = time.UTC // a zone the box does not know (Outlook's names): its definition is in the object
	}
	if z != nil {
		z[tzid] = loc
	}
	return loc
}

// parseTime reads one value of a date or date-time property p (one of a
// list, or a PERIOD's start): a DATE is midnight, a floating time UTC, a
// time with a TZID in that zone. The year must be within 0001-9999.
func parseTime(p *ical.Prop, v string, z zones) (time.Time, error) {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, '/'); i >= 0 {
		v = v[:i] // a PERIOD: its start
	}
	var (
		t   time.Time
		err error
	)
	switch {
	case len(v) == 8:
		t, err = time.ParseInLocation("20060102", v, time.UTC)
	case strings.HasSuffix(v, "Z"):
		t, err = time.ParseInLocation("20060102T150405Z", v, time.UTC)
	default:
		t, err = time.ParseInLocation("20060102T150405", v, z.location(p.Params.Get(ical.ParamTimezoneID)))
	}
	if err != nil {
		return t, fmt.Errorf("%w: %q is not a date or date-time", errDate, v)
	}
	if err := state.Storable(p.Name, t); err != nil {
		return t, fmt.Errorf("%w: %v", errDate, err)
	}
	return t, nil
}

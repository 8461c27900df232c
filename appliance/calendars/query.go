package calendars

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-webdav/caldav"
)

// query is calendar-query's filter (RFC 4791 9.7) over a collection's
// objects, matched here rather than by go-webdav's caldav.Filter, which
// expanded recurrences without bound (recur.go). Each object is parsed,
// matched and, unless it matches, let go before the next; the request's
// context is read before each. Fixes to offer go-webdav: time ranges
// compare each instance's whole length, not its start (RFC 4791 9.9), for
// tasks and journal entries too; is-not-defined on a component is true
// where no child of that name is; a prop-filter looks at every property
// of its name, not the first; text matches ignore case (the default
// collation, i;ascii-casemap); RDATEs are read (go-ical read EXDATEs
// twice instead).
func query(ctx context.Context, f caldav.CompFilter, objs []Object, decode func(*Object) (*caldav.CalendarObject, error)) ([]caldav.CalendarObject, int, error) {
	x := newExpansion(ctx)
	var out []caldav.CalendarObject
	for i := range objs {
		if err := ctx.Err(); err != nil {
			return nil, x.guessed, fmt.Errorf("calendar-query: %w", err)
		}
		co, err := decode(&objs[i])
		if err != nil {
			continue // not iCalendar: matches nothing
		}
		x.zones = zones{}
		ok, err := x.match(f, co.Data.Component)
		if err != nil {
			return nil, x.guessed, fmt.Errorf("calendar-query: %s: %w", objs[i].Name, err)
		}
		if ok {
			out = append(out, *co)
		}
	}
	return out, x.guessed, nil
}

// match is whether component c passes comp-filter f.
func (x *expansion) match(f caldav.CompFilter, c *ical.Component) (bool, error) {
	if c.Name != f.Name {
		return f.IsNotDefined, nil
	}
	if !f.Start.IsZero() || !f.End.IsZero() {
		if ok, err := x.inRange(c, f.Start, f.End); !ok || err != nil {
			return false, err
		}
	}
	for _, cf := range f.Comps {
		if ok, err := x.child(cf, c); !ok || err != nil {
			return false, err
		}
	}
	for _, pf := range f.Props {
		if !x.matchProp(pf, c) {
			return false, nil
		}
	}
	return true, nil
}

// child is whether a child of c passes f (or, for is-not-defined, none
// has its name).
func (x *expansion) child(f caldav.CompFilter, c *ical.Component) (bool, error) {
	for _, ch := range c.Children {
		if ch.Name != f.Name {
			continue
		}
		if f.IsNotDefined {
			return false, nil
		}
		if ok, err := x.match(f, ch); ok || err != nil {
			return ok, err
		}
	}
	return f.IsNotDefined, nil
}

// inRange is RFC 4791 9.9's time-range test of a component. A component
// whose time cannot be read here (an alarm, free-busy, a date that does
// not parse) passes: the client tests it again.
func (x *expansion) inRange(c *ical.Component, from, to time.Time) (bool, error) {
	sp, ok := x.spanOf(c)
	if !ok {
		if c.Name == ical.CompJournal || c.Name == ical.CompTimezone {
			return false, nil // a journal entry without DTSTART is in no range
		}
		return true, nil
	}
	return x.occurs(sp, from, to)
}

// matchProp is whether a property of c passes prop-filter f.
func (x *expansion) matchProp(f caldav.PropFilter, c *ical.Component) bool {
	props := c.Props[strings.ToUpper(f.Name)]
	if f.IsNotDefined {
		return len(props) == 0
	}
	for i := range props {
		if x.propPasses(f, &props[i]) {
			return true
		}
	}
	return false
}

func (x *expansion) propPasses(f caldav.PropFilter, p *ical.Prop) bool {
	for _, pf := range f.ParamFilter {
		v := p.Params.Get(pf.Name)
		switch {
		case pf.IsNotDefined:
			if v != "" {
				return false
			}
		case v == "", pf.TextMatch != nil && !textMatches(*pf.TextMatch, v):
			return false
		}
	}
	if !f.Start.IsZero() || !f.End.IsZero() {
		t, err := parseTime(p, p.Value, x.zones)
		return err != nil || overlaps(t, 0, f.Start, f.End)
	}
	return f.TextMatch == nil || textMatches(*f.TextMatch, p.Value)
}

// textMatches is a substring test in i;ascii-casemap, CalDAV's default
// collation (i;unicode-casemap where a client names it, no worse).
func textMatches(tm caldav.TextMatch, v string) bool {
	return strings.Contains(strings.ToLower(v), strings.ToLower(tm.Text)) != tm.NegateCondition
}

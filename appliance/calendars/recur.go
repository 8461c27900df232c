package calendars

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"
)

// Recurrences are expanded lazily and in bounds. go-webdav's matcher
// (caldav.Filter) asked rrule-go for every instance in the query's range
// at once (rset.Between): a 189-byte event with FREQ=SECONDLY and a range
// of a month is 2.6 million instances, and the server passed 600 MB;
// rrule-go's own loops run unbounded where a rule yields nothing
// (FREQ=SECONDLY;INTERVAL=2;BYSECOND=1 never returns), and it reads
// nothing of the request's end. Here a query needs only whether some
// instance overlaps its range, so the expansion stops at the first that
// does; rrule-go is given the rule an era of 400 years at a time
// (ruleOccurs), started at the range rather than at DTSTART when no COUNT
// needs counting from it; the request's context is read between eras and
// every 256 instances.
//
// Where a bound is met, or the rule is one rrule-go might loop on, the
// answer is yes: the object is returned and the client, which expands
// recurrences itself, finds no instance in its range. A query's answer
// can hold an object too many, never lack one.
const (
	// maxInstances is the instances of one component looked at, as
	// sabre/dav's maximum (Settings::$maxRecurrences, 3500): ten years of
	// a daily event, far more of a weekly one, the instances a COUNT rule
	// of a series is walked through before the range.
	maxInstances = 3500
	// queryInstances and querySteps bound a whole query: 100 components
	// walked to their maximum, and rrule-go's walk in days (times one
	// more than the BYSETPOS list): 5,500 years of a daily rule that
	// finds nothing, 70 ms on a laptop's core, under a second on the board.
	queryInstances = 100 * maxInstances
	querySteps     = 2_000_000
	// The rules expanded: the parts of a rule that multiply rrule-go's
	// work in a period are bounded; past these, the object matches
	// unexpanded.
	maxInterval = 10000 // INTERVAL
	maxByValues = 400   // values in one BY list (BYYEARDAY has 732 distinct)
	maxSetPos   = 8     // values in BYSETPOS
	maxTimeset  = 60    // times in a day: BYHOUR × BYMINUTE × BYSECOND
)

// expansion is what one query may still spend on recurrences.
type expansion struct {
	ctx       context.Context
	instances int
	steps     int64
	guessed   int   // components matched unexpanded, a bound met
	zones     zones // of the object being matched
}

func newExpansion(ctx context.Context) *expansion {
	return &expansion{ctx: ctx, instances: queryInstances, steps: querySteps}
}

// span is a component's time: its start, its length and its recurrences.
type span struct {
	start   time.Time
	dur     time.Duration
	rule    *rrule.ROption // nil: none
	rdates  []time.Time
	exdates []int64 // Unix seconds, sorted, at most maxInstances
}

// overlaps is whether an instance that starts at s overlaps [from, to)
// (a zero bound is open), as RFC 4791 9.9 compares them.
func overlaps(s time.Time, dur time.Duration, from, to time.Time) bool {
	if !to.IsZero() && !s.Before(to) {
		return false
	}
	if from.IsZero() {
		return true
	}
	if dur > 0 {
		return s.Add(dur).After(from)
	}
	return !s.Before(from)
}

// occurs is whether any instance of sp overlaps [from, to).
func (x *expansion) occurs(sp span, from, to time.Time) (bool, error) {
	if sp.rule == nil && len(sp.rdates) == 0 {
		return overlaps(sp.start, sp.dur, from, to), nil
	}
	excluded := func(t time.Time) bool { _, ok := slices.BinarySearch(sp.exdates, t.Unix()); return ok }
	if !excluded(sp.start) && overlaps(sp.start, sp.dur, from, to) {
		return true, nil
	}
	for i, r := range sp.rdates {
		if i >= maxInstances {
			return x.guess()
		}
		if !excluded(r) && overlaps(r, sp.dur, from, to) {
			return true, nil
		}
	}
	if sp.rule == nil {
		return false, nil
	}
	return x.ruleOccurs(sp, excluded, from, to)
}

// guess is the answer where a bound is met: yes.
func (x *expansion) guess() (bool, error) {
	x.guessed++
	return true, nil
}

// ruleOccurs walks sp's rule an era at a time. rrule-go reads UNTIL only
// of an instance it found, and a rule that finds none walks on to year
// 9999 (a daily rule of 30 February: 3.6 million days in one call, and
// again in every later call). Its walk ends there, though: so each era of
// 400 years, after which the Gregorian calendar repeats (leap years,
// weekdays, week numbers), is moved to end at 9999 before rrule-go sees
// it, and no call walks more than 400 years. It runs on the wall clock of
// DTSTART's zone, as RFC 5545 counts, each instance then read in the zone.
func (x *expansion) ruleOccurs(sp span, excluded func(time.Time) bool, from, to time.Time) (bool, error) {
	o := *sp.rule
	if !expandable(o) {
		return x.guess()
	}
	loc := sp.start.Location()
	o.Interval = max(o.Interval, 1)
	explicitDefaults(&o, floating(sp.start))
	p := periods{freq: o.Freq, interval: o.Interval, wkst: o.Wkst.Day(), origin: o.Dtstart}
	var until time.Time // on the wall clock, two days' slack for the zone's changes
	if !o.Until.IsZero() {
		until = floating(o.Until.In(loc))
	}
	if !to.IsZero() && (until.IsZero() || to.In(loc).Before(until)) {
		until = floating(to.In(loc)).Add(48 * time.Hour)
	}
	begin := o.Dtstart // instances before it are not looked at
	if o.Count == 0 && !from.IsZero() {
		if k := p.index(floating(from.Add(-sp.dur).In(loc)).Add(-48*time.Hour)) - 1; k > 0 {
			begin = p.start(k)
		}
	}
	w := walk{x: x, o: o, loc: loc, dur: sp.dur, from: from, to: to, until: until, excluded: excluded}
	for era := begin.Year() - begin.Year()%eraYears; era <= rrule.MAXYEAR; era += eraYears {
		eraStart := time.Date(era, 1, 1, 0, 0, 0, 0, time.UTC)
		if !until.IsZero() && until.Before(eraStart) {
			return false, nil
		}
		if err := x.ctx.Err(); err != nil {
			return false, fmt.Errorf("expanding a recurrence: %w", err)
		}
		if x.steps <= 0 {
			return x.guess()
		}
		ws := begin
		if k := p.index(eraStart); ws.Before(eraStart) && p.start(k).After(ws) {
			ws = p.start(k) // the period that holds the era's first day
		}
		first := ws
		if first.Before(eraStart) {
			first = eraStart
		}
		if done, found, err := w.era(ws, first, era); done || err != nil {
			return found, err
		}
	}
	return false, nil
}

// eraYears is the Gregorian calendar's cycle: 146,097 days, 20,871 weeks.
const eraYears = 400

// walk is one rule's expansion across eras.
type walk struct {
	x               *expansion
	o               rrule.ROption
	loc             *time.Location
	dur             time.Duration
	from, to, until time.Time
	excluded        func(time.Time) bool
	looked          int // instances, from the rule's first
}

// era gives rrule-go the rule from ws (a period's start) moved to end at
// year 9999, and looks at its instances from first (those before were
// looked at in the era before) to the era's end. done says the answer is
// found.
func (w *walk) era(ws, first time.Time, era int) (done, found bool, err error) {
	x, shift := w.x, rrule.MAXYEAR+1-eraYears-era
	eraEnd := time.Date(era+eraYears, 1, 1, 0, 0, 0, 0, time.UTC)
	r := w.o
	r.Dtstart, r.Count, r.Until = years(ws, shift), 0, time.Time{}
	if !w.until.IsZero() && w.until.Before(eraEnd) {
		r.Until = years(w.until, shift)
	}
	rule, err := rrule.NewRRule(r)
	if err != nil {
		found, _ = x.guess()
		return true, found, nil
	}
	walked := eraEnd // where rrule-go's walk ended
	// rrule-go's walk, charged by the day; a rule finer than a day costs
	// about 4 times as much a day (measured: 2 million days of a rule
	// that finds nothing, 71 ms daily, 235 ms hourly, 260 ms secondly).
	perDay := int64(1 + len(r.Bysetpos))
	if r.Freq > rrule.DAILY {
		perDay *= 4
	}
	defer func() { x.steps -= int64(walked.Sub(ws).Hours()/24+1) * perDay }()
	next := rule.Iterator()
	for t, ok := next(); ok; t, ok = next() {
		t = years(t, -shift)
		if t.Before(first) {
			continue
		}
		if walked = t; !t.Before(eraEnd) {
			return false, false, nil
		}
		if w.looked++; w.o.Count > 0 && w.looked > w.o.Count {
			return true, false, nil
		}
		if w.looked > maxInstances || x.instances <= 0 {
			found, _ = x.guess()
			return true, found, nil
		}
		if x.instances--; w.looked%256 == 0 && x.ctx.Err() != nil {
			return true, false, fmt.Errorf("expanding a recurrence: %w", x.ctx.Err())
		}
		at := inZone(t, w.loc)
		if !w.excluded(at) && overlaps(at, w.dur, w.from, w.to) {
			return true, true, nil
		}
		if !w.to.IsZero() && !at.Before(w.to) {
			return true, false, nil
		}
	}
	return false, false, nil
}

// floating is t's wall clock as a time in UTC.
func floating(t time.Time) time.Time {
	y, m, d := t.Date()
	hh, mm, ss := t.Clock()
	return time.Date(y, m, d, hh, mm, ss, 0, time.UTC)
}

// inZone is the wall clock f (floating) in loc.
func inZone(f time.Time, loc *time.Location) time.Time {
	y, m, d := f.Date()
	hh, mm, ss := f.Clock()
	return time.Date(y, m, d, hh, mm, ss, 0, loc)
}

// years is the floating time t moved by n years (a multiple of 400: the
// same day of the week, 29 February kept).
func years(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	hh, mm, ss := t.Clock()
	return time.Date(y+n, m, d, hh, mm, ss, 0, time.UTC)
}

// expandable is whether rrule-go may be given the rule: its loops end
// (a rule finer than a day whose BYHOUR, BYMINUTE or BYSECOND its
// INTERVAL never reaches loops forever in one call) and a period's work
// is bounded.
func expandable(o rrule.ROption) bool {
	if o.Interval > maxInterval || len(o.Byeaster) > 0 || o.Freq < rrule.YEARLY || o.Freq > rrule.SECONDLY || o.Count < 0 || len(o.Bysetpos) > maxSetPos {
		return false
	}
	for _, l := range [][]int{o.Bymonth, o.Bymonthday, o.Byyearday, o.Byweekno, o.Byhour, o.Byminute, o.Bysecond, o.Byeaster} {
		if len(l) > maxByValues {
			return false
		}
	}
	if len(o.Byweekday) > maxByValues || max(1, len(o.Byhour))*max(1, len(o.Byminute))*max(1, len(o.Bysecond)) > maxTimeset {
		return false
	}
	return o.Freq < rrule.HOURLY || reachable(o)
}

// reachable is whether a rule finer than a day reaches a time of day its
// limiting BY lists allow: from DTSTART's second of the day, INTERVAL
// units at a time, it reaches those a multiple of gcd(INTERVAL×unit,
// 86400) away. Only the lists that limit count (RFC 5545's table):
// BYMINUTE and BYSECOND expand an HOURLY rule, BYSECOND a MINUTELY one.
func reachable(o rrule.ROption) bool {
	unit := int(unitOf(o.Freq))
	g := gcd(o.Interval*unit, 86400)
	h, m, s := o.Dtstart.Clock()
	at := (h*3600 + m*60 + s) % g
	in := func(l []int, v int) bool { return len(l) == 0 || slices.Contains(l, v) }
	for t := at; t < 86400; t += g {
		if in(o.Byhour, t/3600) && (o.Freq == rrule.HOURLY || in(o.Byminute, t/60%60)) &&
			(o.Freq != rrule.SECONDLY || in(o.Bysecond, t%60)) {
			return true
		}
	}
	return false
}

// unitOf is the seconds of a rule's unit finer than a day.
func unitOf(f rrule.Frequency) int64 {
	switch f {
	case rrule.HOURLY:
		return 3600
	case rrule.MINUTELY:
		return 60
	}
	return 1
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// explicitDefaults writes into o what rrule-go would take from DTSTART
// (the time of day, the day of the week, month or year), so that a
// window started later keeps the rule's own.
func explicitDefaults(o *rrule.ROption, start time.Time) {
	o.Dtstart = start
	if len(o.Byweekno) == 0 && len(o.Byyearday) == 0 && len(o.Bymonthday) == 0 && len(o.Byweekday) == 0 && len(o.Byeaster) == 0 {
		switch o.Freq {
		case rrule.YEARLY:
			if len(o.Bymonth) == 0 {
				o.Bymonth = []int{int(start.Month())}
			}
			o.Bymonthday = []int{start.Day()}
		case rrule.MONTHLY:
			o.Bymonthday = []int{start.Day()}
		case rrule.WEEKLY:
			o.Byweekday = []rrule.Weekday{weekdays[pyWeekday(start.Weekday())]}
		}
	}
	if len(o.Byhour) == 0 && o.Freq < rrule.HOURLY {
		o.Byhour = []int{start.Hour()}
	}
	if len(o.Byminute) == 0 && o.Freq < rrule.MINUTELY {
		o.Byminute = []int{start.Minute()}
	}
	if len(o.Bysecond) == 0 && o.Freq < rrule.SECONDLY {
		o.Bysecond = []int{start.Second()}
	}
}

var weekdays = []rrule.Weekday{rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA, rrule.SU}

// pyWeekday is rrule-go's number of a weekday: Monday 0.
func pyWeekday(d time.Weekday) int { return (int(d) + 6) % 7 }

// periods are a rule's periods, numbered from the one DTSTART is in
// (origin), INTERVAL units each, in the wall clock of origin's zone as
// rrule-go counts them.
type periods struct {
	freq     rrule.Frequency
	interval int
	wkst     int
	origin   time.Time
}

// civil is t's wall clock as seconds (days × 86400 + the time of day).
func civil(t time.Time) int64 {
	y, m, d := t.Date()
	hh, mm, ss := t.Clock()
	return time.Date(y, m, d, hh, mm, ss, 0, time.UTC).Unix()
}

// fromCivil is the time at wall clock c in loc.
func fromCivil(c int64, loc *time.Location) time.Time {
	u := time.Unix(c, 0).UTC()
	y, m, d := u.Date()
	hh, mm, ss := u.Clock()
	return time.Date(y, m, d, hh, mm, ss, 0, loc)
}

// start is the first instant of period k.
func (p periods) start(k int64) time.Time {
	n := k * int64(p.interval)
	o, loc := p.origin, p.origin.Location()
	y, m, _ := o.Date()
	day := civil(o) / 86400 * 86400
	switch p.freq {
	case rrule.YEARLY:
		return time.Date(y+int(min(n, 20000)), 1, 1, 0, 0, 0, 0, loc)
	case rrule.MONTHLY:
		return time.Date(y+int(min(n, 240000)/12), m+time.Month(min(n, 240000)%12), 1, 0, 0, 0, 0, loc)
	case rrule.WEEKLY:
		back := int64((pyWeekday(o.Weekday()) - p.wkst + 7) % 7)
		return fromCivil(day+(7*min(n, 600000)-back)*86400, loc)
	case rrule.DAILY:
		return fromCivil(day+min(n, 4000000)*86400, loc)
	}
	unit := unitOf(p.freq)
	at := civil(o) / unit * unit
	return fromCivil(at+min(n, 4000000*86400/unit)*unit, loc)
}

// index is the number of the period t is in (negative before origin).
func (p periods) index(t time.Time) int64 {
	o := p.origin
	var n int64
	switch p.freq {
	case rrule.YEARLY:
		n = int64(t.Year() - o.Year())
	case rrule.MONTHLY:
		n = int64(t.Year()-o.Year())*12 + int64(t.Month()-o.Month())
	case rrule.WEEKLY:
		back := int64((pyWeekday(o.Weekday()) - p.wkst + 7) % 7)
		n = floorDiv(civil(t)/86400*86400-(civil(o)/86400-back)*86400, 7*86400)
	case rrule.DAILY:
		n = floorDiv(civil(t)-civil(o)/86400*86400, 86400)
	default:
		unit := unitOf(p.freq)
		n = floorDiv(civil(t)-civil(o)/unit*unit, unit)
	}
	return floorDiv(n, int64(p.interval))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// spanOf reads a component's time as RFC 4791 9.9 compares it: VEVENT's
// DTSTART and DTEND or DURATION (a day for a DATE), VTODO's DTSTART and
// DUE or DURATION (or its DUE alone), VJOURNAL's DTSTART (a day for a
// DATE), with their recurrences. ok is false for a component without a
// time this can read: other kinds, and dates that do not parse.
func (x *expansion) spanOf(c *ical.Component) (sp span, ok bool) {
	start := c.Props.Get(ical.PropDateTimeStart)
	if start == nil && c.Name == ical.CompToDo {
		start = c.Props.Get(ical.PropDue)
	}
	if start == nil || c.Name != ical.CompEvent && c.Name != ical.CompToDo && c.Name != ical.CompJournal {
		return sp, false
	}
	s, err := parseTime(start, start.Value, x.zones)
	if err != nil {
		return sp, false
	}
	sp.start = s
	if start.ValueType() == ical.ValueDate || len(strings.TrimSpace(start.Value)) == 8 {
		sp.dur = 24 * time.Hour
	}
	var end *ical.Prop
	switch {
	case c.Name == ical.CompEvent:
		end = c.Props.Get(ical.PropDateTimeEnd)
	case c.Name == ical.CompToDo && start.Name == ical.PropDateTimeStart:
		end = c.Props.Get(ical.PropDue)
	}
	if end != nil {
		if e, err := parseTime(end, end.Value, x.zones); err == nil {
			sp.dur = max(0, e.Sub(s))
		}
	} else if d := c.Props.Get(ical.PropDuration); d != nil && c.Name != ical.CompJournal {
		if dur, err := d.Duration(); err == nil {
			sp.dur = max(0, dur)
		}
	}
	if start.Name == ical.PropDue {
		sp.dur = 0
	}
	x.recurrences(c, &sp)
	return sp, true
}

// recurrences reads a component's RRULE, RDATEs and EXDATEs into sp. A
// rule that does not parse is taken as a rule rrule-go may not be given
// (the component matches unexpanded); EXDATEs past maxInstances are left
// out (the component matches more, never less).
func (x *expansion) recurrences(c *ical.Component, sp *span) {
	if p := c.Props.Get(ical.PropRecurrenceRule); p != nil {
		o, err := parseRule(p.Value, sp.start.Location())
		if err != nil {
			o = &rrule.ROption{Freq: -1}
		}
		sp.rule = o
	}
	for _, p := range c.Props[ical.PropRecurrenceDates] {
		for _, v := range strings.Split(p.Value, ",") {
			if len(sp.rdates) > maxInstances {
				break
			}
			if t, err := parseTime(&p, v, x.zones); err == nil {
				sp.rdates = append(sp.rdates, t)
			}
		}
	}
	for _, p := range c.Props[ical.PropExceptionDates] {
		for _, v := range strings.Split(p.Value, ",") {
			if len(sp.exdates) >= maxInstances {
				break
			}
			if t, err := parseTime(&p, v, x.zones); err == nil {
				sp.exdates = append(sp.exdates, t.Unix())
			}
		}
	}
	slices.Sort(sp.exdates)
}

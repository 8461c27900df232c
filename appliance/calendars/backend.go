package calendars

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-vcard"
	"github.com/emersion/go-webdav"
	"github.com/emersion/go-webdav/caldav"
	"github.com/emersion/go-webdav/carddav"
)

// The paths are the Nextcloud server's, which its clients assume and
// DAVx5, Apple's and Thunderbird's find by discovery.
const (
	davRoot       = "/remote.php/dav/"
	principalsDir = davRoot + "principals/users/"
	calendarsDir  = davRoot + "calendars/"
	addressDir    = davRoot + "addressbooks/users/"
)

// PrincipalPath is a user's principal URL.
func PrincipalPath(user string) string { return principalsDir + user + "/" }

// HomePath is where a user's collections of kind k are.
func HomePath(k Kind, user string) string {
	if k == Calendars {
		return calendarsDir + user + "/"
	}
	return addressDir + user + "/"
}

// target is a request path taken apart.
type target struct {
	kind             Kind
	user, coll, name string // name: an object; coll and name may be empty
	// Where the collection is kept (Store.kept): the user's own, or a
	// share's owner's, and whether the user may only read it.
	owner, ocoll string
	readOnly     bool
	shareID      string
}

// parse takes apart a path under one of the two homes; ok is false for
// anything else.
func parse(p string) (target, bool) {
	var t target
	rest := ""
	switch {
	case strings.HasPrefix(p, calendarsDir):
		t.kind, rest = Calendars, strings.TrimPrefix(p, calendarsDir)
	case strings.HasPrefix(p, addressDir):
		t.kind, rest = AddressBooks, strings.TrimPrefix(p, addressDir)
	default:
		return t, false
	}
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	if len(parts) > 3 || parts[0] == "" {
		return t, false
	}
	for _, s := range parts {
		if !ValidName(s) {
			return t, false
		}
	}
	t.user = parts[0]
	if len(parts) > 1 {
		t.coll = parts[1]
	}
	if len(parts) > 2 {
		t.name = parts[2]
	}
	return t, true
}

func (t target) collPath() string { return HomePath(t.kind, t.user) + t.coll + "/" }

// resolve parses p and checks it is the logged-in user's: another user's
// collections are not found.
func (s *Store) resolve(user, p string) (target, error) {
	t, ok := parse(p)
	if !ok || t.user != user {
		return t, webdav.NewHTTPError(http.StatusNotFound, errors.New("not found"))
	}
	return s.kept(t), nil
}

// httpError maps the store's errors to statuses and RFC preconditions.
func httpError(k Kind, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return webdav.NewHTTPError(http.StatusNotFound, err)
	case errors.Is(err, ErrExists):
		return webdav.NewHTTPError(http.StatusMethodNotAllowed, err)
	case errors.Is(err, ErrPrecondition):
		return webdav.NewHTTPError(http.StatusPreconditionFailed, err)
	case errors.Is(err, ErrTooMany), errors.Is(err, ErrNoRoom):
		return webdav.NewHTTPError(http.StatusInsufficientStorage, err)
	case errors.Is(err, ErrUIDConflict) && k == Calendars:
		return caldav.NewPreconditionError(caldav.PreconditionNoUIDConflict)
	case errors.Is(err, ErrUIDConflict):
		return carddav.NewPreconditionError(carddav.PreconditionNoUIDConflict)
	case errors.Is(err, ErrTooLarge) && k == Calendars:
		return caldav.NewPreconditionError(caldav.PreconditionMaxResourceSize)
	case errors.Is(err, ErrTooLarge):
		return carddav.NewPreconditionError(carddav.PreconditionMaxResourceSize)
	}
	return err
}

// kindBackend is what go-webdav's caldav and carddav backends do alike,
// for one kind: they differ in their types and their validation only.
// One is made for each request, with the logged-in user and the request's
// conditions (go-webdav hands a backend the context alone, and passes on
// the conditions for a PUT only): nothing rides in the context.
type kindBackend struct {
	s    *Store
	kind Kind
	user string
	cond Conditions
}

// collections are the user's own collections and those shared with them.
func (b kindBackend) collections(ctx context.Context) ([]Collection, error) {
	cs, err := b.s.Collections(b.kind, b.user)
	return append(cs, b.s.shared(b.user, b.kind)...), err
}

// collection is the collection at p, as the user sees it.
func (b kindBackend) collection(ctx context.Context, p string) (*Collection, error) {
	t, err := b.s.resolve(b.user, p)
	if err != nil {
		return nil, err
	}
	c, err := b.s.Collection(b.kind, t.owner, t.ocoll)
	if err != nil {
		return nil, httpError(b.kind, err)
	}
	c.User, c.Name = t.user, t.coll // as the user sees it
	return c, nil
}

// create makes c at p, in the user's home (where says so otherwise).
func (b kindBackend) create(ctx context.Context, p string, c Collection, where string) error {
	t, err := b.s.resolve(b.user, p)
	if err != nil || t.coll == "" || t.name != "" {
		return webdav.NewHTTPError(http.StatusForbidden, errors.New(where))
	}
	c.Kind, c.User, c.Name = b.kind, t.user, t.coll
	return httpError(b.kind, b.s.Create(c))
}

func (b kindBackend) object(ctx context.Context, p string) (target, *Object, error) {
	t, err := b.s.resolve(b.user, p)
	if err != nil {
		return t, nil, err
	}
	o, err := b.s.Object(b.kind, t.owner, t.ocoll, t.name)
	return t, o, httpError(b.kind, err)
}

func (b kindBackend) objects(ctx context.Context, p string) (target, []Object, error) {
	t, err := b.s.resolve(b.user, p)
	if err != nil {
		return t, nil, err
	}
	objs, err := b.s.Objects(b.kind, t.owner, t.ocoll)
	return t, objs, httpError(b.kind, err)
}

// put stores what encode gives (the object's UID and its bytes, or the
// precondition it fails) at p.
func (b kindBackend) put(ctx context.Context, p string, encode func(t target) (uid string, data []byte, err error)) (*Object, error) {
	t, err := b.s.resolve(b.user, p)
	if err != nil || t.name == "" {
		return nil, webdav.NewHTTPError(http.StatusNotFound, errors.New("not found"))
	}
	if t.readOnly {
		return nil, errReadOnly
	}
	uid, data, err := encode(t)
	if err != nil {
		return nil, err
	}
	o, _, err := b.s.Put(b.kind, t.owner, t.ocoll, t.name, uid, data, b.cond)
	return o, httpError(b.kind, err)
}

// remove deletes what is at p: an object, a collection, or the user's
// place in a share (they leave it).
func (b kindBackend) remove(ctx context.Context, p string) error {
	t, err := b.s.resolve(b.user, p)
	if err != nil {
		return err
	}
	switch {
	case t.name == "" && t.shareID != "":
		return b.s.Sharing.Leave(t.user, t.shareID)
	case t.name == "":
		return httpError(b.kind, b.s.DeleteCollectionIf(b.kind, t.owner, t.ocoll, b.cond))
	case t.readOnly:
		return errReadOnly
	}
	return httpError(b.kind, b.s.Delete(b.kind, t.owner, t.ocoll, t.name, b.cond))
}

// each converts objs by conv, leaving out those it cannot read.
func each[T any](t target, objs []Object, conv func(target, *Object) (*T, error)) []T {
	out := make([]T, 0, len(objs))
	for i := range objs {
		if v, err := conv(t, &objs[i]); err == nil {
			out = append(out, *v)
		}
	}
	return out
}

// calBackend is the store as go-webdav's caldav.Backend.
type calBackend struct {
	kindBackend
	log *slog.Logger
}

func newCalBackend(s *Store, log *slog.Logger, user string, cond Conditions) calBackend {
	return calBackend{kindBackend{s, Calendars, user, cond}, log}
}

func (b calBackend) CurrentUserPrincipal(ctx context.Context) (string, error) {
	return PrincipalPath(b.user), nil
}

func (b calBackend) CalendarHomeSetPath(ctx context.Context) (string, error) {
	return HomePath(Calendars, b.user), nil
}

func (b calBackend) calendar(c Collection) caldav.Calendar {
	return caldav.Calendar{Path: HomePath(Calendars, c.User) + c.Name + "/", Name: c.DisplayName, Description: c.Description,
		MaxResourceSize: b.s.Limits.Object, SupportedComponentSet: c.Components}
}

func (b calBackend) CreateCalendar(ctx context.Context, cal *caldav.Calendar) error {
	comps := cal.SupportedComponentSet
	if len(comps) == 0 {
		comps = []string{"VEVENT", "VTODO"}
	}
	return b.create(ctx, cal.Path, Collection{DisplayName: cal.Name, Description: cal.Description, Components: comps},
		"a calendar is made in the calendar home")
}

func (b calBackend) ListCalendars(ctx context.Context) ([]caldav.Calendar, error) {
	cs, err := b.collections(ctx)
	var out []caldav.Calendar
	for _, c := range cs {
		out = append(out, b.calendar(c))
	}
	return out, err
}

func (b calBackend) GetCalendar(ctx context.Context, p string) (*caldav.Calendar, error) {
	c, err := b.collection(ctx, p)
	if err != nil {
		return nil, err
	}
	cal := b.calendar(*c)
	return &cal, nil
}

func (b calBackend) toObject(t target, o *Object) (*caldav.CalendarObject, error) {
	cal, err := decodeCalendar(o.Data)
	if err != nil {
		return nil, err
	}
	return &caldav.CalendarObject{Path: t.collPath() + o.Name, ModTime: o.ModTime, ContentLength: int64(len(o.Data)), ETag: o.ETag, Data: cal}, nil
}

func (b calBackend) GetCalendarObject(ctx context.Context, p string, _ *caldav.CalendarCompRequest) (*caldav.CalendarObject, error) {
	t, o, err := b.object(ctx, p)
	if err != nil {
		return nil, err
	}
	return b.toObject(t, o)
}

func (b calBackend) ListCalendarObjects(ctx context.Context, p string, _ *caldav.CalendarCompRequest) ([]caldav.CalendarObject, error) {
	t, objs, err := b.objects(ctx, p)
	if err != nil {
		return nil, err
	}
	return each(t, objs, b.toObject), nil
}

func (b calBackend) QueryCalendarObjects(ctx context.Context, p string, q *caldav.CalendarQuery) ([]caldav.CalendarObject, error) {
	t, objs, err := b.objects(ctx, p)
	if err != nil {
		return nil, err
	}
	if q == nil {
		q = &caldav.CalendarQuery{CompFilter: caldav.CompFilter{Name: ical.CompCalendar}}
	}
	out, guessed, err := query(ctx, q.CompFilter, objs, func(o *Object) (*caldav.CalendarObject, error) { return b.toObject(t, o) })
	if guessed > 0 {
		b.log.Info("calendars: recurrences past the expansion's bounds matched unexpanded", "path", p, "components", guessed)
	}
	return out, err
}

func (b calBackend) PutCalendarObject(ctx context.Context, p string, cal *ical.Calendar, _ *caldav.PutCalendarObjectOptions) (*caldav.CalendarObject, error) {
	o, err := b.put(ctx, p, func(target) (string, []byte, error) {
		_, uid, err := caldav.ValidateCalendarObject(cal)
		if err != nil {
			return "", nil, caldav.NewPreconditionError(caldav.PreconditionValidCalendarObjectResource)
		}
		var buf bytes.Buffer
		if err := ical.NewEncoder(&buf).Encode(cal); err != nil {
			return "", nil, caldav.NewPreconditionError(caldav.PreconditionValidCalendarData)
		}
		return uid, buf.Bytes(), nil
	})
	if err != nil {
		return nil, err
	}
	return &caldav.CalendarObject{Path: p, ModTime: o.ModTime, ETag: o.ETag}, nil
}

func (b calBackend) DeleteCalendarObject(ctx context.Context, p string) error {
	return b.remove(ctx, p)
}

// cardBackend is the store as go-webdav's carddav.Backend.
type cardBackend struct{ kindBackend }

func newCardBackend(s *Store, user string, cond Conditions) cardBackend {
	return cardBackend{kindBackend{s, AddressBooks, user, cond}}
}

func (b cardBackend) CurrentUserPrincipal(ctx context.Context) (string, error) {
	return PrincipalPath(b.user), nil
}

func (b cardBackend) AddressBookHomeSetPath(ctx context.Context) (string, error) {
	return HomePath(AddressBooks, b.user), nil
}

func (b cardBackend) book(c Collection) carddav.AddressBook {
	return carddav.AddressBook{Path: HomePath(AddressBooks, c.User) + c.Name + "/", Name: c.DisplayName, Description: c.Description,
		MaxResourceSize:      b.s.Limits.Object,
		SupportedAddressData: []carddav.AddressDataType{{ContentType: vcard.MIMEType, Version: "3.0"}, {ContentType: vcard.MIMEType, Version: "4.0"}}}
}

func (b cardBackend) ListAddressBooks(ctx context.Context) ([]carddav.AddressBook, error) {
	cs, err := b.collections(ctx)
	var out []carddav.AddressBook
	for _, c := range cs {
		out = append(out, b.book(c))
	}
	return out, err
}

func (b cardBackend) GetAddressBook(ctx context.Context, p string) (*carddav.AddressBook, error) {
	c, err := b.collection(ctx, p)
	if err != nil {
		return nil, err
	}
	ab := b.book(*c)
	return &ab, nil
}

func (b cardBackend) CreateAddressBook(ctx context.Context, ab *carddav.AddressBook) error {
	return b.create(ctx, ab.Path, Collection{DisplayName: ab.Name, Description: ab.Description},
		"an address book is made in the address book home")
}

func (b cardBackend) DeleteAddressBook(ctx context.Context, p string) error { return b.remove(ctx, p) }

func (b cardBackend) toObject(t target, o *Object) (*carddav.AddressObject, error) {
	card, err := decodeCard(o.Data)
	if err != nil {
		return nil, err
	}
	return &carddav.AddressObject{Path: t.collPath() + o.Name, ModTime: o.ModTime, ContentLength: int64(len(o.Data)), ETag: o.ETag, Card: card}, nil
}

func (b cardBackend) GetAddressObject(ctx context.Context, p string, _ *carddav.AddressDataRequest) (*carddav.AddressObject, error) {
	t, o, err := b.object(ctx, p)
	if err != nil {
		return nil, err
	}
	return b.toObject(t, o)
}

func (b cardBackend) ListAddressObjects(ctx context.Context, p string, _ *carddav.AddressDataRequest) ([]carddav.AddressObject, error) {
	t, objs, err := b.objects(ctx, p)
	if err != nil {
		return nil, err
	}
	return each(t, objs, b.toObject), nil
}

func (b cardBackend) QueryAddressObjects(ctx context.Context, p string, q *carddav.AddressBookQuery) ([]carddav.AddressObject, error) {
	all, err := b.ListAddressObjects(ctx, p, nil)
	if err != nil {
		return nil, err
	}
	if q == nil {
		return all, nil
	}
	// Matched here, not by go-webdav's carddav.Filter (fixes to offer it):
	// a filter without prop-filters matches every object (RFC 6352
	// 10.5; it matched none), every field of the name counts (it looked
	// at the first), and text matches in the default collation,
	// i;unicode-casemap, ignore case (it compared bytes).
	var out []carddav.AddressObject
	for _, ao := range all {
		if matchCard(q, ao.Card) {
			out = append(out, ao)
			if q.Limit > 0 && len(out) == q.Limit {
				break
			}
		}
	}
	return out, nil
}

func (b cardBackend) PutAddressObject(ctx context.Context, p string, card vcard.Card, _ *carddav.PutAddressObjectOptions) (*carddav.AddressObject, error) {
	o, err := b.put(ctx, p, func(t target) (string, []byte, error) {
		if err := validCard(card); err != nil {
			return "", nil, carddav.NewPreconditionError(carddav.PreconditionValidAddressData)
		}
		var buf bytes.Buffer
		if err := vcard.NewEncoder(&buf).Encode(card); err != nil {
			return "", nil, carddav.NewPreconditionError(carddav.PreconditionValidAddressData)
		}
		return cardUID(card, t.name), buf.Bytes(), nil
	})
	if err != nil {
		return nil, err
	}
	return &carddav.AddressObject{Path: p, ModTime: o.ModTime, ETag: o.ETag}, nil
}

func (b cardBackend) DeleteAddressObject(ctx context.Context, p string) error {
	return b.remove(ctx, p)
}

// validCard is RFC 6350's and RFC 2426's minimum: VERSION 3.0 or 4.0 and
// an FN.
func validCard(c vcard.Card) error {
	v := c.Value(vcard.FieldVersion)
	if v != "3.0" && v != "4.0" {
		return errors.New("a vCard must be version 3.0 or 4.0")
	}
	if c.Value(vcard.FieldFormattedName) == "" {
		return errors.New("a vCard must have an FN")
	}
	return nil
}

// matchCard is RFC 6352 10.5's filter on one vCard.
func matchCard(q *carddav.AddressBookQuery, card vcard.Card) bool {
	if len(q.PropFilters) == 0 {
		return true
	}
	all := q.FilterTest == carddav.FilterAllOf
	for _, pf := range q.PropFilters {
		if ok := matchProp(pf, card[strings.ToUpper(pf.Name)]); ok != all {
			return ok // anyof: the first match decides; allof: the first miss
		}
	}
	return all
}

func matchProp(pf carddav.PropFilter, fields []*vcard.Field) bool {
	if pf.IsNotDefined {
		return len(fields) == 0
	}
	if len(fields) == 0 {
		return false
	}
	if len(pf.TextMatches) == 0 {
		return true
	}
	all := pf.Test == carddav.FilterAllOf
	for _, tm := range pf.TextMatches {
		ok := false
		for _, f := range fields {
			if matchText(tm, f.Value) {
				ok = true
				break
			}
		}
		if ok != all {
			return ok
		}
	}
	return all
}

// matchText compares in i;unicode-casemap, RFC 6352's default collation.
func matchText(tm carddav.TextMatch, value string) bool {
	v, t := strings.ToLower(value), strings.ToLower(tm.Text)
	var ok bool
	switch tm.MatchType {
	case carddav.MatchEquals:
		ok = v == t
	case carddav.MatchStartsWith:
		ok = strings.HasPrefix(v, t)
	case carddav.MatchEndsWith:
		ok = strings.HasSuffix(v, t)
	default:
		ok = strings.Contains(v, t)
	}
	return ok != tm.NegateCondition
}

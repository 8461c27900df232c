package calendars

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-vcard"
	"github.com/emersion/go-webdav/caldav"
)

// Backup writes a user's calendars and address books as one zip file:
// calendars/NAME.ics (one VCALENDAR with every event and task of the
// calendar, its time zones once each) and addressbooks/NAME.vcf (the
// vCards one after another), the forms that other servers and apps
// import. It returns how many objects it wrote.
func (s *Store) Backup(user string, w io.Writer) (int, error) {
	z := zip.NewWriter(w)
	n := 0
	for _, k := range []Kind{Calendars, AddressBooks} {
		colls, err := s.Collections(k, user)
		if err != nil {
			return n, err
		}
		for _, c := range colls {
			objs, err := s.Objects(k, user, c.Name)
			if err != nil {
				return n, err
			}
			f, err := z.CreateHeader(&zip.FileHeader{Name: string(k) + "/" + c.Name + k.ext(), Method: zip.Deflate, Modified: time.Now()})
			if err != nil {
				return n, err
			}
			if k == AddressBooks {
				for _, o := range objs {
					f.Write(o.Data)
					n++
				}
				continue
			}
			all := ical.NewCalendar()
			all.Props.SetText(ical.PropVersion, "2.0")
			all.Props.SetText(ical.PropProductID, "-//bonesync//backup//EN")
			if c.DisplayName != "" {
				all.Props.SetText("X-WR-CALNAME", c.DisplayName)
			}
			zones := map[string]bool{}
			for _, o := range objs {
				cal, err := decodeCalendar(o.Data)
				if err != nil {
					return n, fmt.Errorf("%s/%s: %w", c.Name, o.Name, err)
				}
				for _, comp := range cal.Children {
					if comp.Name == ical.CompTimezone {
						id := comp.Props.Get(ical.PropTimezoneID)
						if id == nil || zones[id.Value] {
							continue
						}
						zones[id.Value] = true
					}
					all.Children = append(all.Children, comp)
				}
				n++
			}
			if len(all.Children) > 0 {
				if err := ical.NewEncoder(f).Encode(all); err != nil {
					return n, fmt.Errorf("calendar %s: %w", c.Name, err)
				}
			}
		}
	}
	return n, z.Close()
}

// Restored counts what Restore did.
type Restored struct {
	Objects, Replaced, Refused int
	Problems                   []string
}

// Restore reads a Backup (or any zip of NAME.ics and NAME.vcf files under
// calendars/ and addressbooks/) into a user's collections, making the
// collections that are missing. An object whose UID is already there is
// replaced; one that does not validate is refused and named in Problems.
func (s *Store) Restore(user string, r io.ReaderAt, size int64) (Restored, error) {
	var res Restored
	z, err := zip.NewReader(r, size)
	if err != nil {
		return res, fmt.Errorf("not a bonesync backup (a zip): %w", err)
	}
	for _, f := range z.File {
		dir, file := path.Split(f.Name)
		var k Kind
		switch dir {
		case "calendars/":
			k = Calendars
		case "addressbooks/":
			k = AddressBooks
		default:
			continue
		}
		name := strings.TrimSuffix(file, k.ext())
		if name == file || !ValidName(name) {
			res.Problems = append(res.Problems, fmt.Sprintf("%s: not a NAME%s file", f.Name, k.ext()))
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return res, err
		}
		data, err := io.ReadAll(io.LimitReader(rc, 1<<30))
		rc.Close()
		if err != nil {
			return res, fmt.Errorf("%s: %w", f.Name, err)
		}
		if _, err := s.Collection(k, user, name); errors.Is(err, ErrNotFound) {
			c := Collection{Kind: k, User: user, Name: name, DisplayName: name}
			if k == Calendars {
				c.Components = []string{"VEVENT", "VTODO"}
			}
			if err := s.Create(c); err != nil {
				return res, fmt.Errorf("%s: %w", f.Name, err)
			}
		}
		if k == Calendars {
			err = s.restoreCalendar(user, name, data, &res)
		} else {
			err = s.restoreCards(user, name, data, &res)
		}
		if err != nil {
			return res, fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return res, nil
}

// objectName is the file an object with this UID is kept in.
func objectName(uid string, k Kind) string {
	var b strings.Builder
	for _, r := range uid {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '@') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	n := strings.TrimLeft(b.String(), ".")
	if n == "" || len(n) > 200 {
		n = etag([]byte(uid))
	}
	return n + k.ext()
}

func (s *Store) putRestored(k Kind, user, coll, uid string, data []byte, res *Restored) {
	name, cond, replacing := objectName(uid, k), Conditions{IfNoneMatch: []string{"*"}}, false
	dir, _ := s.collDir(k, user, coll)
	if unlock, err := s.lock(dir); err == nil {
		if idx, err := s.index(dir, k); err == nil {
			if have, ok := idx.m[uid]; ok {
				name, cond, replacing = have, Conditions{}, true // replace it where it is
			}
		}
		unlock()
	}
	_, _, err := s.Put(k, user, coll, name, uid, data, cond)
	if errors.Is(err, ErrPrecondition) {
		// Another object has that file name: a name of its own.
		name = etag([]byte(uid)) + k.ext()
		_, _, err = s.Put(k, user, coll, name, uid, data, cond)
	}
	if err != nil {
		res.Refused++
		res.Problems = append(res.Problems, fmt.Sprintf("%s/%s: %v", coll, uid, err))
		return
	}
	if replacing {
		res.Replaced++
	}
	res.Objects++
}

// restoreCalendar splits a VCALENDAR into one object per UID, each with
// the time zones it needs.
func (s *Store) restoreCalendar(user, coll string, data []byte, res *Restored) error {
	dec := ical.NewDecoder(bytes.NewReader(data))
	for {
		cal, err := nextCalendar(dec)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var zones []*ical.Component
		byUID := map[string][]*ical.Component{}
		var order []string
		for _, comp := range cal.Children {
			if comp.Name == ical.CompTimezone {
				zones = append(zones, comp)
				continue
			}
			uid := ""
			if p := comp.Props.Get(ical.PropUID); p != nil {
				uid = p.Value
			}
			if uid == "" {
				res.Refused++
				res.Problems = append(res.Problems, fmt.Sprintf("%s: a %s without UID", coll, comp.Name))
				continue
			}
			if byUID[uid] == nil {
				order = append(order, uid)
			}
			byUID[uid] = append(byUID[uid], comp)
		}
		for _, uid := range order {
			one := ical.NewCalendar()
			one.Props.SetText(ical.PropVersion, "2.0")
			prodid := "-//bonesync//restore//EN"
			if p := cal.Props.Get(ical.PropProductID); p != nil {
				prodid = p.Value
			}
			one.Props.SetText(ical.PropProductID, prodid)
			for _, z := range zones {
				if usesZone(byUID[uid], z) {
					one.Children = append(one.Children, z)
				}
			}
			one.Children = append(one.Children, byUID[uid]...)
			if _, _, err := caldav.ValidateCalendarObject(one); err != nil {
				res.Refused++
				res.Problems = append(res.Problems, fmt.Sprintf("%s/%s: %v", coll, uid, err))
				continue
			}
			var b bytes.Buffer
			if err := ical.NewEncoder(&b).Encode(one); err != nil {
				res.Refused++
				res.Problems = append(res.Problems, fmt.Sprintf("%s/%s: %v", coll, uid, err))
				continue
			}
			s.putRestored(Calendars, user, coll, uid, b.Bytes(), res)
		}
	}
}

// usesZone says whether any property of comps names the time zone z.
func usesZone(comps []*ical.Component, z *ical.Component) bool {
	id := z.Props.Get(ical.PropTimezoneID)
	if id == nil {
		return false
	}
	var walk func(c *ical.Component) bool
	walk = func(c *ical.Component) bool {
		for _, props := range c.Props {
			for _, p := range props {
				if p.Params.Get(ical.ParamTimezoneID) == id.Value {
					return true
				}
			}
		}
		for _, ch := range c.Children {
			if walk(ch) {
				return true
			}
		}
		return false
	}
	for _, c := range comps {
		if walk(c) {
			return true
		}
	}
	return false
}

func (s *Store) restoreCards(user, coll string, data []byte, res *Restored) error {
	dec := vcard.NewDecoder(bytes.NewReader(data))
	for {
		card, err := nextCard(dec)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := validCard(card); err != nil {
			res.Refused++
			res.Problems = append(res.Problems, fmt.Sprintf("%s/%s: %v", coll, card.Value(vcard.FieldFormattedName), err))
			continue
		}
		uid := card.Value(vcard.FieldUID)
		if uid == "" {
			var b bytes.Buffer
			vcard.NewEncoder(&b).Encode(card)
			uid = "urn:sha256:" + etag(b.Bytes())
			card.SetValue(vcard.FieldUID, uid)
		}
		var b bytes.Buffer
		if err := vcard.NewEncoder(&b).Encode(card); err != nil {
			res.Refused++
			continue
		}
		s.putRestored(AddressBooks, user, coll, uid, b.Bytes(), res)
	}
}

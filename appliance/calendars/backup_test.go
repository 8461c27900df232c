package calendars

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const zoned = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\nBEGIN:VEVENT\r\nUID:%s\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;TZID=Europe/Berlin:20261201T100000\r\nSUMMARY:%s\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

func TestBackupRestore(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.EnsureDefault(Calendars, "bob")
	s.EnsureDefault(AddressBooks, "bob")
	for i := range 3 {
		if _, _, err := s.Put(Calendars, "bob", DefaultCalendar, fmt.Sprintf("e%d.ics", i), fmt.Sprintf("uid-%d", i), []byte(fmt.Sprintf(zoned, fmt.Sprintf("uid-%d", i), fmt.Sprintf("meeting %d", i))), Conditions{}); err != nil {
			t.Fatal(err)
		}
	}
	card := "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:urn:uuid:1\r\nFN:Ada\r\nEND:VCARD\r\n"
	s.Put(AddressBooks, "bob", DefaultAddressBook, "a.vcf", "urn:uuid:1", []byte(card), Conditions{})
	var zipped bytes.Buffer
	n, err := s.Backup("bob", &zipped)
	if err != nil || n != 4 {
		t.Fatalf("Backup = %d, %v", n, err)
	}
	z, _ := zip.NewReader(bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
	files := map[string]string{}
	for _, f := range z.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		files[f.Name] = string(b)
	}
	ics := files["calendars/personal.ics"]
	if strings.Count(ics, "BEGIN:VEVENT") != 3 || strings.Count(ics, "BEGIN:VTIMEZONE") != 1 || strings.Count(ics, "BEGIN:VCALENDAR") != 1 {
		t.Errorf("personal.ics: one calendar, three events, one zone expected:\n%s", ics)
	}
	if !strings.Contains(files["addressbooks/contacts.vcf"], "FN:Ada") {
		t.Errorf("contacts.vcf: %q", files["addressbooks/contacts.vcf"])
	}
	// Into another user: the same objects, each with its zone.
	res, err := s.Restore("eve", bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
	if err != nil || res.Objects != 4 || res.Refused != 0 {
		t.Fatalf("Restore = %+v, %v", res, err)
	}
	objs, _ := s.Objects(Calendars, "eve", DefaultCalendar)
	if len(objs) != 3 || !strings.Contains(string(objs[0].Data), "TZID:Europe/Berlin") {
		t.Errorf("eve's calendar after the restore: %d objects", len(objs))
	}
	// Again: replaced by UID, not doubled.
	res, _ = s.Restore("eve", bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
	if objs, _ := s.Objects(Calendars, "eve", DefaultCalendar); len(objs) != 3 || res.Replaced != 4 {
		t.Errorf("a second restore: %d objects, %+v", len(objs), res)
	}
}

// Run as root (sudo bonesync restore) on a file store that belongs to the
// service's user, the store leaves everything it makes that user's.
func TestRootKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	files := t.TempDir()
	os.Chown(files, 4321, 4321)
	s, err := Open(files)
	if err != nil {
		t.Fatal(err)
	}
	s.EnsureDefault(Calendars, "bob")
	if _, _, err := s.Put(Calendars, "bob", DefaultCalendar, "e.ics", "u", []byte(fmt.Sprintf(zoned, "u", "x")), Conditions{}); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(files, func(p string, fi os.FileInfo, err error) error {
		if st := fi.Sys().(*syscall.Stat_t); p != files && st.Uid != 4321 {
			t.Errorf("%s is owned by %d", p, st.Uid)
		}
		return nil
	})
}

// Two UIDs that make the same file name, and a UID whose file name a
// client's object already has: nothing is overwritten.
func TestRestoreKeepsOthers(t *testing.T) {
	s, _ := Open(t.TempDir())
	s.EnsureDefault(Calendars, "bob")
	s.Put(Calendars, "bob", DefaultCalendar, "foo.ics", "other", []byte(fmt.Sprintf(zoned, "other", "client's")), Conditions{})
	var ics bytes.Buffer
	for _, uid := range []string{"a b", "a:b", "foo"} {
		ics.WriteString(fmt.Sprintf(zoned, uid, "restored "+uid))
	}
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, _ := zw.Create("calendars/personal.ics")
	w.Write(ics.Bytes())
	zw.Close()
	res, err := s.Restore("bob", bytes.NewReader(z.Bytes()), int64(z.Len()))
	if err != nil || res.Objects != 3 || res.Refused != 0 {
		t.Fatalf("Restore = %+v, %v", res, err)
	}
	objs, _ := s.Objects(Calendars, "bob", DefaultCalendar)
	all := ""
	for _, o := range objs {
		all += string(o.Data)
	}
	if len(objs) != 4 || !strings.Contains(all, "client's") {
		t.Errorf("after the restore: %d objects; the client's kept: %v", len(objs), strings.Contains(all, "client's"))
	}
}

// A user's calendars as the admin's view counts and removes them.
func TestUsageAndRemoveOwner(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureDefault(Calendars, "ann"); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Usage("ann"); err != nil || n == 0 {
		t.Fatalf("ann's calendars take %d bytes, %v", n, err)
	}
	if n, err := s.Usage("nobody"); err != nil || n != 0 {
		t.Fatalf("nobody's: %d %v", n, err)
	}
	if o := s.Owners(); len(o) != 1 || o[0] != "ann" {
		t.Fatalf("owners %v", o)
	}
	if err := s.RemoveOwner("ann"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Usage("ann"); n != 0 || len(s.Owners()) != 0 {
		t.Fatalf("after removing: %d bytes, owners %v", n, s.Owners())
	}
	if err := s.RemoveOwner("../x"); err == nil {
		t.Fatal("RemoveOwner took a path")
	}
}

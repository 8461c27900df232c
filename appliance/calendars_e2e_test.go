package main

// Calendars and contacts with a real client from Debian: vdirsyncer syncs
// a calendar and an address book both ways, discovering them from the bare
// host name. Run from TestSync, on its box.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const vEvent = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bonesync test//EN\r\nBEGIN:VEVENT\r\nUID:%s\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20261201T100000Z\r\nDTEND:20261201T110000Z\r\nSUMMARY:%s\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"

const vCard = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:%s\r\nFN:%s\r\nN:%s;;;;\r\nEND:VCARD\r\n"

func testVdirsyncer(t *testing.T, b *box) {
	need(t, "vdirsyncer")
	work := filepath.Join(b.work, "vdir")
	server := "https://localhost:" + b.port(b.https)
	run := vdirsyncer(t, work, server, "admin", b.password, b.caFile)
	cal := server + "/remote.php/dav/calendars/admin/personal/"
	book := server + "/remote.php/dav/addressbooks/users/admin/contacts/"
	put := func(url, ctype, body string) {
		t.Helper()
		if code, out := b.curl("-u", b.admin(), "-H", "Content-Type: "+ctype, "--data-binary", body, "-X", "PUT", url); code != 201 && code != 204 {
			t.Fatalf("PUT %s = %d %s", url, code, out)
		}
	}
	// Made on the server side (another client).
	put(cal+"server-event.ics", "text/calendar", fmt.Sprintf(vEvent, "server-event", "Made on the box"))
	put(book+"server-card.vcf", "text/vcard", fmt.Sprintf(vCard, "server-card", "Ada Lovelace", "Lovelace"))

	run("discover")
	run("sync")
	localCal, localBook := filepath.Join(work, "cal", "personal"), filepath.Join(work, "card", "contacts")
	if got := readAll(t, localCal); !strings.Contains(got, "Made on the box") {
		t.Fatalf("the box's event did not reach the client: %q", got)
	}
	if got := readAll(t, localBook); !strings.Contains(got, "Ada Lovelace") {
		t.Fatalf("the box's contact did not reach the client: %q", got)
	}
	// Made on the client side.
	os.WriteFile(filepath.Join(localCal, "client-event.ics"), []byte(fmt.Sprintf(vEvent, "client-event", "Made on the laptop")), 0o644)
	os.WriteFile(filepath.Join(localBook, "client-card.vcf"), []byte(fmt.Sprintf(vCard, "client-card", "Grace Hopper", "Hopper")), 0o644)
	run("sync")
	onBox := func(url string) string {
		t.Helper()
		code, body := b.curl("-u", b.admin(), "-X", "REPORT", "-H", "Depth: 1", "--data",
			`<cal:calendar-query xmlns:d="DAV:" xmlns:cal="urn:ietf:params:xml:ns:caldav"><d:prop><cal:calendar-data/></d:prop><cal:filter><cal:comp-filter name="VCALENDAR"/></cal:filter></cal:calendar-query>`, url)
		if strings.Contains(url, "addressbooks") {
			code, body = b.curl("-u", b.admin(), "-X", "REPORT", "-H", "Depth: 1", "--data",
				`<card:addressbook-query xmlns:d="DAV:" xmlns:card="urn:ietf:params:xml:ns:carddav"><d:prop><card:address-data/></d:prop></card:addressbook-query>`, url)
		}
		if code != 207 {
			t.Fatalf("REPORT %s = %d %s", url, code, body)
		}
		return body
	}
	if got := onBox(cal); !strings.Contains(got, "Made on the laptop") {
		t.Errorf("the client's event did not reach the box:\n%s", got)
	}
	if got := onBox(book); !strings.Contains(got, "Grace Hopper") {
		t.Errorf("the client's contact did not reach the box:\n%s", got)
	}
	// An edit on the client and a delete on the box propagate.
	os.WriteFile(filepath.Join(localCal, "client-event.ics"), []byte(fmt.Sprintf(vEvent, "client-event", "Moved to Tuesday")), 0o644)
	if code, out := b.curl("-u", b.admin(), "-X", "DELETE", book+"server-card.vcf"); code != 204 && code != 200 {
		t.Fatalf("DELETE = %d %s", code, out)
	}
	run("sync")
	if got := onBox(cal); !strings.Contains(got, "Moved to Tuesday") || strings.Contains(got, "Made on the laptop") {
		t.Errorf("the client's edit did not reach the box:\n%s", got)
	}
	if got := readAll(t, localBook); strings.Contains(got, "Ada Lovelace") || !strings.Contains(got, "Grace Hopper") {
		t.Errorf("the box's delete did not reach the client: %q", got)
	}
	// Nothing new: nothing copied either way.
	out := run("sync")
	if regexp.MustCompile(`(?i)copying|updating|deleting`).MatchString(out) {
		t.Errorf("a sync with nothing new moved items:\n%s", out)
	}

	// bonesync backup writes what other servers import; restore reads it
	// back, here into another user's account.
	zipFile := filepath.Join(work, "admin.zip")
	if out, err := exec.Command(built(t), "backup", "-state", b.state, "admin", zipFile).CombinedOutput(); err != nil || !strings.Contains(string(out), "3 events, tasks and contacts") {
		t.Fatalf("bonesync backup: %v\n%s", err, out)
	}
	add := exec.Command(built(t), "user", "-state", b.state, "add", "cal-copy")
	add.Stdin = strings.NewReader("cal-copy-password\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("user add: %v %s", err, out)
	}
	if out, err := exec.Command(built(t), "restore", "-state", b.state, "cal-copy", zipFile).CombinedOutput(); err != nil || !strings.Contains(string(out), "3 objects restored") {
		t.Fatalf("bonesync restore: %v\n%s", err, out)
	}
	copied := filepath.Join(b.state, "files", ".calendars", "cal-copy", "calendars", "personal")
	if got := readAll(t, copied); !strings.Contains(got, "Moved to Tuesday") {
		t.Errorf("the restored calendar: %q", got)
	}
}

// readAll is every file of a directory, concatenated.
func readAll(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var s strings.Builder
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		s.Write(b)
	}
	return s.String()
}

// A client that polls with sync tokens (python3-caldav, Debian's): the
// first sync lists the calendar, a sync with nothing new gets the token
// back and nothing else, one with a change gets that change.
func testCaldavTokens(t *testing.T, b *box) {
	if err := exec.Command("/usr/bin/python3", "-c", "import caldav").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3-caldav is not installed; scripts/install-test-deps.sh installs it")
		}
		t.Skip("python3-caldav not installed")
	}
	const py = `import caldav, json, sys
url, user, pw, ca = sys.argv[1:5]
client = caldav.DAVClient(url, username=user, password=pw, ssl_verify_cert=ca)
cal = [c for c in client.principal().calendars() if str(c.url).rstrip("/").endswith("/personal")][0]
objs = cal.objects_by_sync_token(load_objects=True)
first, tok1 = len(list(objs)), objs.sync_token
up, gone = objs.sync()
nothing = (len(list(up)), len(list(gone)), objs.sync_token == tok1)
cal.save_event("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:token-event\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20261205T100000Z\r\nSUMMARY:By token\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
up, gone = objs.sync()
print(json.dumps({"first": first, "nothing": nothing, "changed": len(list(up)), "token_moved": objs.sync_token != tok1}))`
	server := "https://localhost:" + b.port(b.https)
	// One event there before the first sync, whatever ran before.
	if code, out := b.curl("-u", b.admin(), "-H", "Content-Type: text/calendar", "--data-binary", fmt.Sprintf(vEvent, "before-token", "There first"),
		"-X", "PUT", server+"/remote.php/dav/calendars/admin/personal/before-token.ics"); code != 201 && code != 204 {
		t.Fatalf("PUT = %d %s", code, out)
	}
	out, err := exec.Command("/usr/bin/python3", "-c", py, server+"/remote.php/dav/", "admin", b.password, b.caFile).CombinedOutput()
	if err != nil {
		t.Fatalf("python3-caldav: %v\n%s", err, out)
	}
	var got struct {
		First      int
		Nothing    []any
		Changed    int
		TokenMoved bool `json:"token_moved"`
	}
	if err := json.Unmarshal(out[bytes.LastIndexByte(bytes.TrimSpace(out), '\n')+1:], &got); err != nil {
		t.Fatalf("python3-caldav said %s", out)
	}
	if got.First < 1 || len(got.Nothing) != 3 || got.Nothing[0] != 0.0 || got.Nothing[1] != 0.0 || got.Nothing[2] != true || got.Changed != 1 || !got.TokenMoved {
		t.Errorf("sync by token: %s", out)
	}
}

// vdirsyncer writes a vdirsyncer config in work that pairs user's
// calendars and address books on server with folders in work (cal/,
// card/), and returns a runner of vdirsyncer on it (answering its
// questions yes).
func vdirsyncer(t *testing.T, work, server, user, password, caFile string) func(args ...string) string {
	t.Helper()
	conf := fmt.Sprintf(`[general]
status_path = "%[1]s/status/"
`, work)
	for _, kind := range []struct{ name, dav, ext string }{{"cal", "caldav", ".ics"}, {"card", "carddav", ".vcf"}} {
		conf += fmt.Sprintf(`
[pair %[1]s]
a = "%[1]s_local"
b = "%[1]s_remote"
collections = ["from b"]

[storage %[1]s_local]
type = "filesystem"
path = "%[4]s/%[1]s/"
fileext = "%[3]s"

[storage %[1]s_remote]
type = "%[2]s"
url = "%[5]s/"
username = "%[6]s"
password = "%[7]s"
verify = "%[8]s"
`, kind.name, kind.dav, kind.ext, work, server, user, password, caFile)
	}
	os.MkdirAll(work, 0o755)
	confFile := filepath.Join(work, "config")
	os.WriteFile(confFile, []byte(conf), 0o600)
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command("vdirsyncer", append([]string{"-c", confFile}, args...)...)
		cmd.Stdin = strings.NewReader(strings.Repeat("y\n", 10))
		cmd.Env = append(os.Environ(), "HOME="+work)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("vdirsyncer %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
}

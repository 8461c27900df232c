package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// addUser makes an account with the user command.
func (b *box) addUser(name, pw string) {
	b.t.Helper()
	add := exec.Command(built(b.t), "user", "-state", b.state, "add", name)
	add.Stdin = strings.NewReader(pw + "\n")
	if out, err := add.CombinedOutput(); err != nil {
		b.t.Fatalf("user add %s: %v %s", name, err, out)
	}
}

// ocs is the box's OCS base URL.
func (b *box) ocs(p string) string { return "https://localhost:" + b.port(b.https) + "/ocs/v2.php" + p }

// testShares shares a folder from one user to another over the OCS API,
// as the apps' share menus do, and checks with curl (WebDAV) and OpenSSH's
// sftp that a read-only share refuses every change, a read-write one takes
// them (for its owner), and a revoked one is gone at once.
func testShares(t *testing.T, b *box) {
	b.addUser("sara", "sara-secret-1")
	b.addUser("tom", "tom-secret-1")
	sara, tom := "sara:sara-secret-1", "tom:tom-secret-1"
	note := filepath.Join(b.work, "note.txt")
	os.WriteFile(note, []byte("from sara\n"), 0o644)
	b.curl("-u", sara, "-X", "MKCOL", b.url("Holiday"))
	if code, _ := b.curl("-u", sara, "-T", note, b.url("Holiday/note.txt")); code != 201 {
		t.Fatalf("PUT = %d", code)
	}
	code, body := b.curl("-u", sara, "-H", "OCS-APIREQUEST: true", "--data", "path=/Holiday&shareType=0&shareWith=tom&permissions=1", b.ocs("/apps/files_sharing/api/v1/shares"))
	id := regexp.MustCompile(`<id>(\d+)</id>`).FindStringSubmatch(body)
	if code != 200 || id == nil {
		t.Fatalf("share = %d %s", code, body)
	}
	// Tom reads it over WebDAV and SFTP.
	if code, body := b.curl("-u", tom, b.url("Holiday/note.txt")); code != 200 || body != "from sara\n" {
		t.Errorf("tom's GET = %d %q", code, body)
	}
	back := filepath.Join(b.work, "tom-got.txt")
	if out, ok := b.sftp("tom", "password:tom-secret-1", "get Holiday/note.txt "+back); !ok {
		t.Errorf("tom's sftp get:\n%s", out)
	}
	// Read-only: every change refused, over each protocol.
	for what, args := range map[string][]string{
		"PUT":                     {"-T", note, b.url("Holiday/new.txt")},
		"overwrite":               {"-T", note, b.url("Holiday/note.txt")},
		"DELETE":                  {"-X", "DELETE", b.url("Holiday/note.txt")},
		"MKCOL":                   {"-X", "MKCOL", b.url("Holiday/sub")},
		"MOVE":                    {"-X", "MOVE", "-H", "Destination: " + b.url("Holiday/moved.txt"), b.url("Holiday/note.txt")},
		"PROPPATCH":               {"-X", "PROPPATCH", "--data", `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:lastmodified>1600000000</d:lastmodified></d:prop></d:set></d:propertyupdate>`, b.url("Holiday/note.txt")},
		"PROPPATCH of a property": {"-X", "PROPPATCH", "--data", `<d:propertyupdate xmlns:d="DAV:" xmlns:x="urn:x"><d:set><d:prop><x:tag>tom's</x:tag></d:prop></d:set></d:propertyupdate>`, b.url("Holiday/note.txt")},
		"COPY into":               {"-X", "COPY", "-H", "Destination: " + b.url("Holiday/copy.txt"), b.url("Holiday/note.txt")},
	} {
		if code, _ := b.curl(append([]string{"-u", tom}, args...)...); code != 403 {
			t.Errorf("tom's %s in a read-only share = %d, want 403", what, code)
		}
	}
	for _, cmd := range []string{"put " + note + " Holiday/new.txt", "rm Holiday/note.txt", "mkdir Holiday/sub",
		"rename Holiday/note.txt Holiday/moved.txt", "chmod 600 Holiday/note.txt"} {
		if out, ok := b.sftp("tom", "password:tom-secret-1", cmd); ok {
			t.Errorf("tom's sftp %q in a read-only share succeeded:\n%s", cmd, out)
		}
	}
	if code, body := b.curl("-u", sara, b.url("Holiday/note.txt")); code != 200 || body != "from sara\n" {
		t.Errorf("sara's file after tom's tries = %d %q", code, body)
	}
	// Read and write: tom's file is sara's.
	if code, body := b.curl("-u", sara, "-X", "PUT", "--data", "permissions=15", b.ocs("/apps/files_sharing/api/v1/shares/"+id[1])); code != 200 {
		t.Fatalf("update = %d %s", code, body)
	}
	if out, ok := b.sftp("tom", "password:tom-secret-1", "put "+note+" Holiday/from-tom.txt"); !ok {
		t.Errorf("tom's sftp put in a read-write share:\n%s", out)
	}
	if code, _ := b.curl("-u", sara, b.url("Holiday/from-tom.txt")); code != 200 {
		t.Errorf("sara does not have tom's file: %d", code)
	}
	// Revoked: gone for tom at once.
	if code, _ := b.curl("-u", sara, "-X", "DELETE", b.ocs("/apps/files_sharing/api/v1/shares/"+id[1])); code != 200 {
		t.Errorf("revoke = %d", code)
	}
	if code, _ := b.curl("-u", tom, b.url("Holiday/note.txt")); code != 404 {
		t.Errorf("tom's GET after the revoke = %d, want 404", code)
	}
}

// testCalendarShare shares sara's calendar read-only with tom from the
// sharing page, and looks at it as tom through python3-caldav (it is
// listed, its events read, a new event refused) and vdirsyncer (its
// events come down).
func testCalendarShare(t *testing.T, b *box) {
	need(t, "vdirsyncer")
	if err := exec.Command("/usr/bin/python3", "-c", "import caldav").Run(); err != nil {
		t.Fatal("python3-caldav is not installed; scripts/install-test-deps.sh installs it")
	}
	server := "https://localhost:" + b.port(b.https)
	cal := server + "/remote.php/dav/calendars/sara/personal/"
	if code, out := b.curl("-u", "sara:sara-secret-1", "-H", "Content-Type: text/calendar", "--data-binary", fmt.Sprintf(vEvent, "sara-party", "Sara's party"),
		"-X", "PUT", cal+"party.ics"); code != 201 && code != 204 {
		t.Fatalf("PUT = %d %s", code, out)
	}
	c, session, csrf := webSession(t, b, "sara", "sara-secret-1")
	req, _ := http.NewRequest("POST", server+"/shares", strings.NewReader(url.Values{"csrf": {csrf}, "action": {"add"}, "kind": {"user"},
		"collection": {"calendar/personal"}, "with": {"tom"}, "rights": {"read"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", session)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page := readAllString(resp.Body)
	resp.Body.Close()
	if !strings.Contains(page, "Shared with tom.") {
		t.Fatalf("sharing the calendar: %s %s", resp.Status, page)
	}

	const py = `import caldav, json, sys
url, user, pw, ca = sys.argv[1:5]
client = caldav.DAVClient(url, username=user, password=pw, ssl_verify_cert=ca)
cals = client.principal().calendars()
shared = [c for c in cals if "shared_by_sara" in str(c.url)][0]
events = [e.vobject_instance.vevent.summary.value for e in shared.events()]
try:
    shared.save_event("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:tom-try\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20261205T100000Z\r\nSUMMARY:Tom's\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    refused = False
except Exception as e:
    refused = True
print(json.dumps({"calendars": [str(c.url) for c in cals], "name": shared.name, "events": events, "refused": refused}))`
	out, err := exec.Command("/usr/bin/python3", "-c", py, server+"/remote.php/dav/", "tom", "tom-secret-1", b.caFile).CombinedOutput()
	if err != nil {
		t.Fatalf("python3-caldav: %v\n%s", err, out)
	}
	var got struct {
		Calendars []string
		Name      string
		Events    []string
		Refused   bool
	}
	if err := json.Unmarshal(out[bytes.LastIndexByte(bytes.TrimSpace(out), '\n')+1:], &got); err != nil {
		t.Fatalf("python3-caldav said %s", out)
	}
	if len(got.Events) != 1 || got.Events[0] != "Sara's party" || !got.Refused || got.Name != "Personal (sara)" && !strings.Contains(got.Name, "(sara)") {
		t.Errorf("tom's view of sara's calendar through python3-caldav: %s", out)
	}

	work := filepath.Join(b.work, "vdir-tom")
	run := vdirsyncer(t, work, "https://localhost:"+b.port(b.https), "tom", "tom-secret-1", b.caFile)
	run("discover")
	run("sync")
	if got := readAll(t, filepath.Join(work, "cal", "personal_shared_by_sara")); !strings.Contains(got, "Sara's party") {
		t.Errorf("vdirsyncer did not bring sara's event to tom: %q", got)
	}
}

// testPublicLinkDAV mounts public links as folders, as rclone's
// --webdav-url and file managers do: a read-only folder link with a
// password listed and copied by rclone (the token as the user, the
// password obscured), a change refused by curl with 403, the newer
// /public.php/dav/files/TOKEN/ listed by curl's PROPFIND; then a
// read-write link without one takes rclone's copy up, for its owner.
func testPublicLinkDAV(t *testing.T, b *box) {
	b.addUser("lia", "lia-secret-1")
	lia := "lia:lia-secret-1"
	tree := filepath.Join(b.work, "trip")
	want := map[string]string{}
	for _, f := range []string{"a.txt", "sub/b.bin"} {
		os.MkdirAll(filepath.Dir(filepath.Join(tree, f)), 0o755)
		want[f] = randomFile(t, filepath.Join(tree, f), 3000)
	}
	b.curl("-u", lia, "-X", "MKCOL", b.url("Trip"))
	b.curl("-u", lia, "-X", "MKCOL", b.url("Trip/sub"))
	for f := range want {
		if code, _ := b.curl("-u", lia, "-T", filepath.Join(tree, f), b.url("Trip/"+f)); code != 201 {
			t.Fatalf("PUT %s = %d", f, code)
		}
	}
	link := func(query string) string {
		t.Helper()
		code, body := b.curl("-u", lia, "-H", "OCS-APIREQUEST: true", "--data", query, b.ocs("/apps/files_sharing/api/v1/shares"))
		tok := regexp.MustCompile(`<token>([A-Za-z0-9]{15})</token>`).FindStringSubmatch(body)
		if code != 200 || tok == nil {
			t.Fatalf("link %s = %d %s", query, code, body)
		}
		return tok[1]
	}
	ro := link("path=/Trip&shareType=3&permissions=1&password=trip-pass-1")
	root := "https://localhost:" + b.port(b.https) + "/public.php"
	rclone := func(user, pw string, args ...string) string {
		t.Helper()
		obscured, err := exec.Command("rclone", "obscure", pw).Output()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("rclone", append([]string{"--config", "/dev/null", "--ca-cert", b.caFile, "--retries", "1",
			"--webdav-url", root + "/webdav", "--webdav-vendor", "owncloud", "--webdav-user", user,
			"--webdav-pass", strings.TrimSpace(string(obscured))}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("rclone %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got := rclone(ro, "trip-pass-1", "lsf", "-R", ":webdav:"); got != "a.txt\nsub/\nsub/b.bin\n" {
		t.Errorf("rclone lsf of the link = %q", got)
	}
	back := filepath.Join(b.work, "trip-back")
	rclone(ro, "trip-pass-1", "copy", ":webdav:", back)
	for f, h := range want {
		if got := sum(t, filepath.Join(back, f)); got != h {
			t.Errorf("%s copied from the link differs", f)
		}
	}
	if code, _ := b.curl("-u", ro+":trip-pass-1", "-T", filepath.Join(tree, "a.txt"), root+"/webdav/new.txt"); code != 403 {
		t.Errorf("PUT into a read-only link = %d, want 403", code)
	}
	if code, _ := b.curl("-u", ro+":wrong-pass", root+"/webdav/a.txt"); code != 401 {
		t.Errorf("GET with a wrong password = %d, want 401", code)
	}
	code, body := b.curl("-u", "anonymous:trip-pass-1", "-X", "PROPFIND", "-H", "Depth: 1", root+"/dav/files/"+ro+"/")
	if code != 207 || !strings.Contains(body, "/public.php/dav/files/"+ro+"/a.txt") || strings.Contains(body, "lia") {
		t.Errorf("PROPFIND of /public.php/dav/files/TOKEN/ = %d:\n%s", code, body)
	}
	// Read and write, no password: rclone copies up, into lia's files.
	rw := link("path=/Trip/sub&shareType=3&permissions=15")
	up := filepath.Join(b.work, "trip-up")
	os.MkdirAll(up, 0o755)
	h := randomFile(t, filepath.Join(up, "from-friend.bin"), 5000)
	rclone(rw, "", "copy", up, ":webdav:")
	dl := filepath.Join(b.work, "from-friend.bin")
	if code, _ := b.curl("-u", lia, "-o", dl, b.url("Trip/sub/from-friend.bin")); code != 200 || sum(t, dl) != h {
		t.Errorf("lia's copy of the file that came by the link = %d", code)
	}
}

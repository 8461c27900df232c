package webui

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/admin/admintest"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/emmc"
	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/appliance/users"
)

// The admin page's actions not walked elsewhere: a password reset (the
// new one shown once, the old one no longer taken), a quota (a bad one
// refused with what it should be), measuring again (once at a time, then
// back to the page), and an action the page does not have.
func TestAdminActions(t *testing.T) {
	s := newSite(t)
	cookie, csrf := s.login(users.Admin, users.Admin+"-password")
	post := func(v url.Values) (int, string) {
		v.Set("csrf", csrf)
		resp, page := s.do("POST", "/admin/", cookie, v)
		return resp.StatusCode, page + resp.Header.Get("Location")
	}
	if code, page := post(url.Values{"action": {"reset"}, "user": {"ann"}}); code != 200 || !strings.Contains(page, "Password of ann reset") {
		t.Errorf("reset ann's password = %d %s", code, page)
	}
	if ok, _ := s.users.CheckPassword("ann", "ann-password", false, users.Takes{}); ok {
		t.Error("ann's old password still logs in after a reset")
	}
	if code, page := post(url.Values{"action": {"quota"}, "user": {"bob"}, "quota_mb": {"-1"}}); code != 400 || !strings.Contains(page, "The quota is a whole number of MiB") {
		t.Errorf("a negative quota = %d", code)
	}
	if code, _ := post(url.Values{"action": {"quota"}, "user": {"bob"}, "quota_mb": {" 12 "}}); code != 200 || s.users.Quota("bob") != 12<<20 {
		t.Errorf("a quota of 12 MiB = %d, bob's quota %d", code, s.users.Quota("bob"))
	}
	if code, page := post(url.Values{"action": {"measure"}}); code != 501 || !strings.Contains(page, "cannot measure again") {
		t.Errorf("measuring with nothing to measure = %d", code)
	}
	release := make(chan struct{})
	s.admin.Measure = func(context.Context, io.Writer) error { <-release; return nil }
	if code, to := post(url.Values{"action": {"measure"}}); code != 303 || !strings.HasSuffix(to, "/admin/#bench") {
		t.Errorf("measure = %d to %q, want 303 to /admin/#bench", code, to)
	}
	if code, _ := post(url.Values{"action": {"measure"}}); code != 409 {
		t.Errorf("measuring while a measurement runs = %d, want 409", code)
	}
	close(release)
	if code, _ := post(url.Values{"action": {"format-the-disk"}}); code != 400 {
		t.Errorf("an unknown action = %d, want 400", code)
	}
}

// The copies' actions that ask for the admin's password again (POST
// /admin/copies, auth.Confirmed): a changed SFTP host key shown with both
// fingerprints and accepted, the key the page named handed on and the
// acceptance in the audit log; the encryption password shown again, said
// to be the box's one for every target. Neither is an action of the plain
// admin route, nor open once the password was typed too long ago, nor to
// another user.
func TestAdminCopiesConfirmed(t *testing.T) {
	s := newSite(t)
	ch := copies.HostKeyChanged{Host: "nas:22", Pinned: "SHA256:oldoldoldoldoldoldoldoldoldoldoldoldoldoldo (ED25519)",
		Offered: "SHA256:newnewnewnewnewnewnewnewnewnewnewnewnewnewn (ED25519)"}
	var accepted []string
	s.admin.System = &admintest.System{
		Plan: "to sftp://me@nas/b, daily at 03:30",
		LastCopy: func() (copies.Status, bool) {
			return copies.Status{Target: "sftp://me@nas/b", Ended: time.Now(), Error: ch.Error(), HostKey: &ch}, true
		},
		Password: "the-box-password",
		AcceptKey: func(offered string) (copies.HostKeyChanged, error) {
			accepted = append(accepted, offered)
			return ch, nil
		},
	}
	cookie, csrf := s.login(users.Admin, users.Admin+"-password")
	_, page := s.do("GET", "/admin/", cookie, nil)
	for _, want := range []string{ch.Pinned, `<code id="copy-offered">` + ch.Offered, `action="/admin/copies"`, `value="copy-accept-key"`, "ssh-keygen -lf", `value="copy-password"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the admin page does not show %q", want)
		}
	}
	post := func(path, cookie string, v url.Values) (*http.Response, string) {
		v.Set("csrf", csrf)
		return s.do("POST", path, cookie, v, "Accept", "text/html")
	}
	if resp, page := post("/admin/copies", cookie, url.Values{"action": {"copy-accept-key"}, "offered": {ch.Offered}}); resp.StatusCode != 200 || !strings.Contains(page, "new host key is accepted") {
		t.Fatalf("accept the new key = %s", resp.Status)
	}
	if len(accepted) != 1 || accepted[0] != ch.Offered {
		t.Errorf("accepted %q, want the key the page showed", accepted)
	}
	if ev, _ := s.common.Audit.Recent(10); len(ev) == 0 || !strings.Contains(ev[0].What, "accepted the copy target nas:22's new host key "+ch.Offered) {
		t.Errorf("the audit log: %+v", ev)
	}
	if resp, page := post("/admin/copies", cookie, url.Values{"action": {"copy-password"}}); resp.StatusCode != 200 ||
		!strings.Contains(page, `<code id="copy-password">the-box-password</code>`) || !strings.Contains(page, "the box's one, for every target") {
		t.Fatalf("show the password again = %s", resp.Status)
	}
	if resp, page := post("/admin/", cookie, url.Values{"action": {"copy-password"}}); resp.StatusCode != 400 || strings.Contains(page, "the-box-password") {
		t.Errorf("the password on the admin route, not asked again = %s", resp.Status)
	}
	s.now = s.now.Add(6 * time.Minute)
	resp, page := post("/admin/copies", cookie, url.Values{"action": {"copy-password"}})
	if resp.StatusCode != 403 || resp.Header.Get("X-Bonesync-Confirm") != "password" || strings.Contains(page, "the-box-password") {
		t.Errorf("the password 6 minutes after it was typed = %s %q", resp.Status, resp.Header.Get("X-Bonesync-Confirm"))
	}
	annCookie, annCSRF := s.login("ann", "ann-password")
	if resp, _ := s.do("POST", "/admin/copies", annCookie, url.Values{"csrf": {annCSRF}, "action": {"copy-accept-key"}, "offered": {ch.Offered}}); resp.StatusCode != 403 || len(accepted) != 1 {
		t.Errorf("ann accepting a key = %s", resp.Status)
	}
}

// The eMMC's flash is a confirmed action: the form and the last flash's
// record on the page, refused on the plain admin route, started once on
// the confirmed one and audited, and PID 1's refusal shown as it came.
func TestAdminEMMCFlash(t *testing.T) {
	s := newSite(t)
	flashes := 0
	var refuse error
	done := emmc.Record{Phase: emmc.Done, Device: "mmcblk1", Size: 3_900_000_000, Started: time.Now(), Finished: time.Now()}
	s.admin.System = &admintest.System{
		BoardName: "beaglebone-black", RebootTo: func(string) {}, Slots: &update.Card{}, Flashed: &done,
		Flash: func() error { flashes++; return refuse },
	}
	cookie, csrf := s.login(users.Admin, users.Admin+"-password")
	_, page := s.do("GET", "/admin/", cookie, nil)
	for _, want := range []string{`value="emmc-flash"`, `id="emmc-status"`, "verified at", "take the card out"} {
		if !strings.Contains(page, want) {
			t.Errorf("the admin page does not show %q", want)
		}
	}
	post := func(path string, v url.Values) (*http.Response, string) {
		v.Set("csrf", csrf)
		return s.do("POST", path, cookie, v, "Accept", "text/html")
	}
	if resp, _ := post("/admin/", url.Values{"action": {"emmc-flash"}}); resp.StatusCode != 400 || flashes != 0 {
		t.Errorf("the flash on the admin route, the password not asked again = %s, %d flashes", resp.Status, flashes)
	}
	if resp, page := post("/admin/copies", url.Values{"action": {"emmc-flash"}}); resp.StatusCode != 200 || !strings.Contains(page, "Copying the system to the eMMC") || flashes != 1 {
		t.Errorf("the flash = %s, %d flashes", resp.Status, flashes)
	}
	if ev, _ := s.common.Audit.Recent(10); len(ev) == 0 || !strings.Contains(ev[0].What, "started copying the system to the eMMC") {
		t.Errorf("the audit log: %+v", ev)
	}
	refuse = errors.New("this system runs from the eMMC already")
	if resp, page := post("/admin/copies", url.Values{"action": {"emmc-flash"}}); resp.StatusCode != 409 || !strings.Contains(page, "runs from the eMMC already") {
		t.Errorf("a refused flash = %s", resp.Status)
	}
}

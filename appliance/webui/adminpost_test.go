package webui

import (
	"context"
	"io"
	"net/url"
	"strings"
	"testing"

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

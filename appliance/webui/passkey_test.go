package webui

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/passkeys/passkeytest"
)

// begin posts a passkey's begin, and returns its token and the options
// for the browser.
func (s *site) begin(path, cookie string, form url.Values, hdr ...string) (string, []byte) {
	s.t.Helper()
	resp, body := s.do("POST", path, cookie, form, hdr...)
	var c struct {
		Token   string          `json:"token"`
		Options json.RawMessage `json:"options"`
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &c) != nil || c.Token == "" {
		s.t.Fatalf("begin: %s %s", resp.Status, body)
	}
	return c.Token, c.Options
}

// The pages' passkeys, reached by a name (localhost): the account page
// makes one once the password is typed again and lists it; the login
// page signs in with it alone, and after a two-factor account's password
// in place of the code; removed, it is gone. Reached by an IP address,
// the pages say why there is no passkey.
func TestPasskeysOnThePages(t *testing.T) {
	s := newSite(t)
	srv, _ := url.Parse(s.srv.URL)
	name := "localhost:" + srv.Port()
	host := []string{"Host", name}
	key := &passkeytest.Authenticator{Origin: "https://" + name}
	cookie, csrf := s.login("ann", "ann-password")
	if _, page := s.do("GET", "/account", cookie, nil); !strings.Contains(page, `id="passkey-hint"`) || strings.Contains(page, `id="passkey-new"`) {
		t.Error("the account page at an IP address offers a passkey, or does not say why not")
	}
	begin := url.Values{"name": {"Ann's phone"}, "current": {"wrong-password"}}
	if resp, _ := s.do("POST", "/account/passkey/begin", cookie, begin, append(host, "X-CSRF-Token", csrf)...); resp.StatusCode != 403 {
		t.Errorf("a passkey begun with a wrong password: %s", resp.Status)
	}
	begin.Set("current", "ann-password")
	tok, opts := s.begin("/account/passkey/begin", cookie, begin, append(host, "X-CSRF-Token", csrf)...)
	answer, err := key.Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	resp, page := s.do("POST", "/account/passkey", cookie, url.Values{"csrf": {csrf}, "token": {tok}, "name": {"Ann's phone"}, "answer": {string(answer)}}, host...)
	if resp.StatusCode != 200 || !strings.Contains(page, "<td>Ann&#39;s phone</td><td>localhost</td>") {
		t.Fatalf("the passkey made: %s\n%s", resp.Status, page)
	}

	signIn := func(pageCookie, csrf string) *http.Response {
		t.Helper()
		tok, opts := s.begin("/login/passkey/begin", pageCookie, url.Values{"csrf": {csrf}}, host...)
		answer, err := key.Get(opts)
		if err != nil {
			t.Fatal(err)
		}
		resp, _ := s.do("POST", "/login/passkey", pageCookie, url.Values{"csrf": {csrf}, "token": {tok}, "answer": {string(answer)}, "next": {"/files/"}}, host...)
		return resp
	}
	resp, page = s.do("GET", "/login", "", nil, host...)
	lc, m := cookieOf(resp, loginCookie), csrfField.FindStringSubmatch(page)
	if !strings.Contains(page, `id="passkey-form"`) || lc == nil || m == nil {
		t.Fatalf("the login page offers no passkey:\n%s", page)
	}
	if resp := signIn(loginCookie+"="+lc.Value, m[1]); resp.StatusCode != http.StatusSeeOther || cookieOf(resp, auth.SessionCookie) == nil || resp.Header.Get("Location") != "/files/" {
		t.Errorf("a sign-in with the passkey alone: %s %v", resp.Status, resp.Header)
	}
	if _, page := s.do("GET", "/login", "", nil); strings.Contains(page, `id="passkey-form"`) || !strings.Contains(page, `id="passkey-hint"`) {
		t.Error("the login page at an IP address offers a passkey, or does not say why not")
	}

	// Two-factor login on: after the password, the passkey for the code.
	secret, _ := s.users.NewTOTP("ann")
	code, _ := totp.GenerateCode(secret.Secret(), time.Now())
	if _, err := s.users.EnableTOTP("ann", secret.Secret(), code); err != nil {
		t.Fatal(err)
	}
	resp, page = s.do("GET", "/login", "", nil, host...)
	lc, m = cookieOf(resp, loginCookie), csrfField.FindStringSubmatch(page)
	resp, page = s.do("POST", "/login", loginCookie+"="+lc.Value, url.Values{"csrf": {m[1]}, "username": {"ann"}, "password": {"ann-password"}}, host...)
	cc := cookieOf(resp, codeCookie)
	if cc == nil || !strings.Contains(page, "Use a passkey instead") {
		t.Fatalf("the code step offers no passkey: %s\n%s", resp.Status, page)
	}
	if resp := signIn(codeCookie+"="+cc.Value+"; "+loginCookie+"="+lc.Value, cc.Value); resp.StatusCode != http.StatusSeeOther || cookieOf(resp, auth.SessionCookie) == nil {
		t.Errorf("the passkey after the password: %s", resp.Status)
	}

	var made struct{ ID string }
	json.Unmarshal(answer, &made)
	resp, page = s.do("POST", "/account", cookie, url.Values{"csrf": {csrf}, "action": {"passkey-remove"}, "id": {made.ID}}, host...)
	if resp.StatusCode != 200 || !strings.Contains(page, "No passkeys yet.") {
		t.Errorf("removing the passkey: %s", resp.Status)
	}
}

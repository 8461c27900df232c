package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"
)

// testPasskeys drives passkeys in Chromium with the DevTools' virtual
// authenticator (CTAP2, built in, resident keys, the user verified), on a
// box of its own on a copy of b's state, reached by a name (localhost:
// browsers refuse passkeys at an IP address): admin makes a passkey on
// the account page, logs out, and signs in with it alone; the box
// restarts (sessions and ceremonies are in memory) and the passkey signs
// in again. With two-factor login on, the passkey stands in for the code
// after the password, and a recovery code still logs in.
func testPasskeys(t *testing.T, b *box) {
	state := cloneState(t, b.state)
	k := startBox(t, state)
	ctx := chromium(t, k, 8*time.Minute)
	if _, err := chromedp.Call(ctx, cdpwebauthn.Enable, cdpwebauthn.EnableParams{}); err != nil {
		t.Fatalf("the WebAuthn domain: %v", err)
	}
	auth, err := chromedp.Call(ctx, cdpwebauthn.AddVirtualAuthenticator, cdpwebauthn.AddVirtualAuthenticatorParams{Options: &cdpwebauthn.VirtualAuthenticatorOptions{
		Protocol: cdpwebauthn.AuthenticatorProtocolCtap2, Transport: cdpwebauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
	if err != nil {
		t.Fatalf("a virtual authenticator: %v", err)
	}
	base := "https://localhost:" + k.port(k.https)
	where := func() string { loc, _ := chromedp.Run(ctx, chromedp.Location()); return loc }
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s (at %s): %v", what, where(), err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("the text of %s (at %s): %v", sel, where(), err)
		}
		return s
	}
	password := func() {
		t.Helper()
		do("the login form", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("username")),
			chromedp.SendKeys(chromedp.ID("username"), "admin"), chromedp.SendKeys(chromedp.ID("password"), b.password),
			chromedp.Click(chromedp.ID("login")))
	}
	signedIn := func(how string) {
		t.Helper()
		do(how, chromedp.WaitVisible(chromedp.ID("new-folder")))
		do("log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("username")))
	}
	passkey := func(how string) {
		t.Helper()
		do(how, chromedp.WaitVisible(chromedp.ID("passkey")), chromedp.Click(chromedp.ID("passkey")))
		signedIn(how)
	}

	password()
	do("the account page", chromedp.WaitVisible(chromedp.ID("new-folder")), chromedp.Navigate(base+"/account"),
		chromedp.SendKeys(chromedp.ID("passkey-name"), "Test laptop"), chromedp.SendKeys(chromedp.ID("passkey-current"), b.password),
		chromedp.Click(chromedp.ID("passkey-add")), chromedp.WaitVisible(chromedp.CSS("p.flash")))
	if list := text("#passkeys table"); !strings.Contains(list, "Test laptop") || !strings.Contains(list, "localhost") {
		t.Fatalf("the account page's passkeys: %q (flash %q)", list, text("main"))
	}
	do("log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("username")))
	passkey("a passkey alone")
	creds, err := chromedp.Call(ctx, cdpwebauthn.GetCredentials, cdpwebauthn.GetCredentialsParams(auth))
	if err != nil || len(creds.Credentials) != 1 || !creds.Credentials[0].IsResidentCredential || creds.Credentials[0].RpID != "localhost" {
		t.Fatalf("the authenticator holds %+v, %v; want one resident credential for localhost", creds, err)
	}

	k.stop()
	k = startBox(t, state)
	base = "https://localhost:" + k.port(k.https)
	do("the login page after a restart", chromedp.Navigate(base+"/login"))
	passkey("a passkey after a restart")

	// Two-factor login on, from the account page.
	password()
	do("set up two-factor login", chromedp.WaitVisible(chromedp.ID("new-folder")), chromedp.Navigate(base+"/account"),
		chromedp.Click(chromedp.ID("totp-new")), chromedp.WaitVisible(chromedp.ID("totp-secret")))
	code, err := totp.GenerateCode(text("#totp-secret"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	do("turn it on", chromedp.SendKeys(chromedp.ID("totp-current"), b.password), chromedp.SendKeys(chromedp.ID("totp-code"), code),
		chromedp.Click(chromedp.ID("totp-enable")), chromedp.WaitVisible(chromedp.ID("recovery-codes")))
	recovery := regexp.MustCompile(`[a-z0-9]{5}-[a-z0-9]{5}`).FindString(text("#recovery-codes"))
	do("log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("username")))
	password()
	// The code step, not the login page before it, which has a passkey
	// button too.
	do("the code step", chromedp.WaitVisible(chromedp.ID("code")))
	passkey("the password, then a passkey for the code")
	password()
	do("a recovery code", chromedp.WaitVisible(chromedp.ID("code")), chromedp.SendKeys(chromedp.ID("code"), recovery),
		chromedp.Click(chromedp.ID("login")))
	signedIn("a recovery code")
}

package auth

import (
	"log/slog"
	"testing"

	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/passkeys/passkeytest"
)

// annPasskey makes ann a passkey at host through d's relying party.
func annPasskey(t *testing.T, d *Door, host string) *passkeytest.Authenticator {
	t.Helper()
	opts, tok, err := d.Passkeys().BeginRegistration("10.0.0.2", host, "ann")
	if err != nil {
		t.Fatal(err)
	}
	a := &passkeytest.Authenticator{Origin: "https://" + host}
	answer, err := a.Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Passkeys().FinishRegistration(host, "ann", tok, "phone", answer); err != nil {
		t.Fatal(err)
	}
	return a
}

// passkeyLogin begins a sign-in (user "": a passkey alone) and answers it
// with a, or with its answer to another sign-in when wrong.
func passkeyLogin(t *testing.T, d *Door, a *passkeytest.Authenticator, addr, host, user string, wrong bool) (string, Result) {
	t.Helper()
	opts, tok, err := d.Passkeys().BeginSignIn(addr, host, user)
	if err != nil {
		t.Fatal(err)
	}
	if wrong {
		opts, _, _ = d.Passkeys().BeginSignIn(addr, host, user)
	}
	answer, err := a.Get(opts)
	if err != nil {
		t.Fatal(err)
	}
	return d.Passkey(addr, host, tok, user, answer)
}

// A passkey is a login as a password is: a right one is recorded in the
// audit log under its way in and makes its address known; wrong ones
// count towards the address's ban, which then refuses a right one too.
func TestPasskeyIsALogin(t *testing.T) {
	d, _ := annDoor(t, slog.New(slog.DiscardHandler))
	rec, err := audit.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.Audit(rec)
	const host = "bonesync.local"
	a := annPasskey(t, d, host)
	if user, res := passkeyLogin(t, d, a, "10.0.0.3", host, "", false); user != "ann" || res != OK {
		t.Fatalf("a passkey alone = %q %v, want ann OK", user, res)
	}
	if _, res := passkeyLogin(t, d, a, "10.0.0.4", host, "ann", false); res != OK {
		t.Fatalf("a passkey after the password = %v, want OK", res)
	}
	if !d.Known("10.0.0.3") {
		t.Error("a passkey's login did not make its address known")
	}
	for range MaxFailures {
		if _, res := passkeyLogin(t, d, a, "10.0.0.9", host, "", true); res != Wrong {
			t.Fatalf("an answer to another sign-in = %v, want Wrong", res)
		}
	}
	if _, res := passkeyLogin(t, d, a, "10.0.0.9", host, "", false); res != Banned {
		t.Errorf("after %d wrong passkeys, a right one = %v, want Banned", MaxFailures, res)
	}
	rec.Flush()
	got, _ := rec.Recent(100)
	protos := map[string]string{}
	for _, e := range got {
		protos[e.Kind+" "+e.Addr] = e.Proto
	}
	if protos["login 10.0.0.3"] != "web passkey" || protos["login 10.0.0.4"] != "web+passkey" || protos["banned 10.0.0.9"] == "" {
		t.Errorf("the audit log holds %v", protos)
	}
}

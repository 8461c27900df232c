package passkeys

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bonesync/bonesync/appliance/passkeys/passkeytest"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/users"
)

// annParty is a relying party for a users database with ann and bob.
func annParty(t *testing.T) (*RelyingParty, *users.DB) {
	t.Helper()
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	db, err := users.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ann", "bob"} {
		if err := db.Add(name, name+"-password"); err != nil {
			t.Fatal(err)
		}
	}
	return New(db), db
}

// register makes ann a passkey at host.
func register(t *testing.T, rp *RelyingParty, host string) *passkeytest.Authenticator {
	t.Helper()
	opts, tok, err := rp.BeginRegistration("10.0.0.2", host, "ann")
	if err != nil {
		t.Fatal(err)
	}
	a := &passkeytest.Authenticator{Origin: "https://" + host}
	answer, err := a.Create(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.FinishRegistration(host, "ann", tok, "Ann's phone", answer); err != nil {
		t.Fatalf("FinishRegistration: %v", err)
	}
	return a
}

// answerSignIn begins a sign-in for user at host and answers it with a; it
// returns Verify's error for the account the answer names.
func answerSignIn(t *testing.T, rp *RelyingParty, a *passkeytest.Authenticator, host, at, user string) error {
	t.Helper()
	opts, tok, err := rp.BeginSignIn("10.0.0.3", host, user)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := a.Get(opts)
	if err != nil {
		t.Fatal(err)
	}
	name, err := rp.Owner(answer)
	if err != nil || name != "ann" {
		t.Fatalf("Owner = %q, %v; want ann", name, err)
	}
	return rp.Verify(at, tok, user, name, answer)
}

// A passkey made at the box's name is kept for that name and signs ann in,
// alone or after her password, again and again (its count goes up); its
// record keeps the last use.
func TestPasskeySignsIn(t *testing.T) {
	rp, db := annParty(t)
	const host = "bonesync.local:8443"
	a := register(t, rp, host)
	keys, _, _ := users.PasskeysOf(db).Of("ann")
	if len(keys) != 1 || keys[0].RPID != "bonesync.local" || keys[0].Name != "Ann's phone" || !keys[0].LastUsed.IsZero() {
		t.Fatalf("kept %+v", keys)
	}
	for _, user := range []string{"", "ann", ""} {
		if err := answerSignIn(t, rp, a, host, host, user); err != nil {
			t.Fatalf("sign-in for %q: %v", user, err)
		}
	}
	if keys, _, _ = users.PasskeysOf(db).Of("ann"); keys[0].LastUsed.IsZero() {
		t.Error("the passkey's last use was not kept")
	}
	if !rp.Has(host, "ann") || rp.Has("other.local", "ann") || rp.Has(host, "bob") {
		t.Error("Has does not tell where ann's passkey works")
	}
}

// What does not sign in: an answer to another sign-in's challenge, a
// token used twice, an answer brought to another host, a copied
// authenticator (its count went back); a sign-in for bob, who has no
// passkey, does not begin, nor anything at an IP address.
func TestPasskeyRefusals(t *testing.T) {
	rp, _ := annParty(t)
	const host = "bonesync.local"
	a := register(t, rp, host)
	other, _, _ := rp.BeginSignIn("10.0.0.4", host, "")
	_, tok, _ := rp.BeginSignIn("10.0.0.4", host, "")
	answer, _ := a.Get(other)
	if err := rp.Verify(host, tok, "", "ann", answer); !errors.Is(err, ErrRefused) {
		t.Errorf("an answer to another challenge: %v, want ErrRefused", err)
	}
	if err := answerSignIn(t, rp, a, host, "evil.example", ""); !errors.Is(err, ErrRefused) {
		t.Errorf("an answer brought to another host: %v, want ErrRefused", err)
	}
	opts, tok, _ := rp.BeginSignIn("10.0.0.6", host, "ann")
	answer, _ = a.Get(opts)
	if err := rp.Verify(host, tok, "ann", "ann", answer); err != nil {
		t.Fatalf("the second factor: %v", err)
	}
	answer, _ = a.Get(opts) // the same challenge, a count further: only the token's single use refuses it
	if err := rp.Verify(host, tok, "ann", "ann", answer); !errors.Is(err, ErrRefused) {
		t.Errorf("a token used twice: %v, want ErrRefused", err)
	}
	a.Count -= 2
	if err := answerSignIn(t, rp, a, host, host, ""); !errors.Is(err, ErrRefused) {
		t.Errorf("a count gone back: %v, want ErrRefused", err)
	}
	if _, _, err := rp.BeginSignIn("10.0.0.8", host, "bob"); err == nil {
		t.Error("a sign-in began for bob, who has no passkey")
	}
	for _, ip := range []string{"192.168.7.2", "192.168.7.2:443", "[fe80::1]:443"} {
		if _, _, err := rp.BeginRegistration("10.0.0.2", ip, "ann"); !errors.Is(err, errAtAddress) {
			t.Errorf("a registration at %s: %v, want errAtAddress", ip, err)
		}
	}
}

// A flood of sign-ins begun from a few addresses, and from many, holds
// no more than maxCeremonies places, and the owner's, begun before, is
// still there.
func TestCeremoniesBounded(t *testing.T) {
	rp, _ := annParty(t)
	_, mine, err := rp.BeginSignIn("10.0.0.2", "bonesync.local", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 * maxCeremonies {
		rp.BeginSignIn(fmt.Sprintf("203.0.113.%d", i%3), "bonesync.local", "")
		rp.BeginSignIn(fmt.Sprintf("198.51.%d.%d", i/250, i%250), "bonesync.local", "")
	}
	rp.ceremonies.mu.Lock()
	n, kept := len(rp.ceremonies.m), rp.ceremonies.m[mine] != nil
	rp.ceremonies.mu.Unlock()
	if n > maxCeremonies || !kept {
		t.Errorf("after the flood: %d ceremonies (at most %d), the owner's kept: %v", n, maxCeremonies, kept)
	}
}

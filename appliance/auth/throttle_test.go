package auth

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/bonesync/bonesync/appliance/users"
)

// clockedDoor is a door to a users database with ann (password
// "ann-password"), on a clock the test moves.
func clockedDoor(t *testing.T) (*Door, *users.DB, *time.Time) {
	t.Helper()
	d, db := annDoor(t, slog.New(slog.DiscardHandler))
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	d.bans.now = func() time.Time { return now }
	d.targets.now = d.bans.now
	db.Now = d.bans.now
	return d, db, &now
}

// stranger is the address of the i-th of many: none fails often enough
// to be banned by itself.
func stranger(i int) string { return fmt.Sprintf("198.51.100.%d", i) }

// The attack of the report: 20 addresses guessing a code each in turn.
// Past FreeGuesses the account's next guess waits firstDelay, doubled at
// each wrong one, from whichever address; one sooner is refused.
func TestCodesLimitedPerAccount(t *testing.T) {
	d, db, now := clockedDoor(t)
	key, _ := db.NewTOTP("ann")
	code, _ := totp.GenerateCode(key.Secret(), *now)
	if _, err := db.EnableTOTP("ann", key.Secret(), code); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.CheckCode("ann", "000000"); ok {
		t.Fatal("the guess is the right code") // then pick another secret
	}
	checked := 0
	for i := range 80 {
		switch res := d.Code(stranger(i%20), "ann", "000000"); res {
		case Wrong:
			checked++
		case Delayed, Banned: // a delayed guess is a failure of its address too
		default:
			t.Fatalf("guess %d: %v", i, res)
		}
	}
	if checked != FreeGuesses {
		t.Errorf("80 guesses in turn from 20 addresses: %d checked, want %d", checked, FreeGuesses)
	}
	for n := FreeGuesses; n < FreeGuesses+4; n++ {
		wait := delayAfter(n)
		if got := d.RetryAfter(stranger(99), "ann"); got != wait {
			t.Errorf("after %d wrong: RetryAfter = %v, want %v", n, got, wait)
		}
		*now = now.Add(wait - time.Millisecond)
		if res := d.Code(stranger(100+2*n), "ann", "000000"); res != Delayed {
			t.Errorf("after %d wrong, a guess just before %v: %v, want Delayed", n, wait, res)
		}
		*now = now.Add(time.Millisecond)
		if res := d.Code(stranger(101+2*n), "ann", "000000"); res != Wrong {
			t.Errorf("after %d wrong, a guess after %v: %v, want Wrong", n, wait, res)
		}
	}
	if got, want := delayAfter(FreeGuesses+3), 8*firstDelay; got != want {
		t.Errorf("delayAfter(%d) = %v, want %v", FreeGuesses+3, got, want)
	}
	if got := delayAfter(FreeGuesses + 100); got != maxDelay {
		t.Errorf("delayAfter(%d) = %v, want %v", FreeGuesses+100, got, maxDelay)
	}
}

// A guess refused for the account's delay runs no hash; the owner gets
// through from an address they logged in from, with an app password, or
// from wherever their live session comes; a stranger with the right
// password waits like any guess.
func TestOwnerNotLockedOut(t *testing.T) {
	d, db, _ := clockedDoor(t)
	app, _, _ := db.NewAppPassword("ann", "phone")
	if d.Password("192.0.2.1", basicPassword, "ann", "ann-password") != OK {
		t.Fatal("ann's first login refused")
	}
	for i := range FreeGuesses {
		d.Password(stranger(i), basicPassword, "ann", "guess")
	}
	hashes := &countTurns{}
	db.HashWith(hashes)
	if res := d.Password(stranger(50), basicPassword, "ann", "guess"); res != Delayed {
		t.Errorf("a stranger's guess in the delay: %v, want Delayed", res)
	}
	if res := d.Password(stranger(51), SSHPassword, "ann", "ann-password"); res != Delayed {
		t.Errorf("the right password from a stranger in the delay: %v, want Delayed", res)
	}
	if n := hashes.n.Load(); n != 0 {
		t.Errorf("refused guesses ran %d hashes, want 0", n)
	}
	if res := d.Password("192.0.2.1", basicPassword, "ann", "ann-password"); res != OK {
		t.Errorf("ann from her own address: %v, want OK", res)
	}
	if res := d.Password(stranger(52), basicPassword, "ann", app); res != OK {
		t.Errorf("ann's app password from a new address: %v, want OK", res)
	}
	// A session started elsewhere, seen from a new address (a phone that
	// moved), makes that address hers.
	w := httptest.NewRecorder()
	d.Sessions().Start(w, "ann")
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "203.0.113.7:5555"
	r.AddCookie(w.Result().Cookies()[0])
	if _, ok := d.Sessions().get(r); !ok {
		t.Fatal("the session is not live")
	}
	if res := d.Password("203.0.113.7", Form, "ann", "ann-password"); res != OK {
		t.Errorf("ann from her session's new address: %v, want OK", res)
	}
	if res := d.Password(stranger(53), basicPassword, "bob", "guess"); res != Wrong {
		t.Errorf("another account is not delayed: %v, want Wrong", res)
	}
}

// Over HTTP a delayed guess is 429 with the wait in Retry-After.
func TestDelayedAnswer(t *testing.T) {
	d, _, _ := clockedDoor(t)
	for i := range FreeGuesses {
		d.Password(stranger(i), basicPassword, "ann", "guess")
	}
	r := httptest.NewRequest("PROPFIND", "/remote.php/dav/files/ann/", nil)
	r.TLS = &tls.ConnectionState{}
	r.RemoteAddr = stranger(60) + ":4000"
	r.SetBasicAuth("ann", "guess")
	w := httptest.NewRecorder()
	if _, err := d.Check(User, w, r); err == nil {
		t.Fatal("a delayed guess logged in")
	}
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Errorf("a delayed guess: %d Retry-After %q, want 429 and 1", w.Code, w.Header().Get("Retry-After"))
	}
}

// A link's password has a delay of its own, apart from other links'; an
// address an account logged in from skips it.
func TestLinkPasswordsLimitedPerLink(t *testing.T) {
	d, db, _ := clockedDoor(t)
	hash, _ := db.Hash("link-password")
	for i := range FreeGuesses {
		if res := d.LinkPassword(stranger(i), "tok", hash, "guess"); res != Wrong {
			t.Fatalf("guess %d: %v", i, res)
		}
	}
	if res := d.LinkPassword(stranger(70), "tok", hash, "link-password"); res != Delayed {
		t.Errorf("the link in its delay: %v, want Delayed", res)
	}
	if got := d.LinkRetryAfter(stranger(70), "tok"); got != firstDelay {
		t.Errorf("LinkRetryAfter = %v, want %v", got, firstDelay)
	}
	if res := d.LinkPassword(stranger(70), "other", hash, "link-password"); res != OK {
		t.Errorf("another link: %v, want OK", res)
	}
	d.Password("192.0.2.9", basicPassword, "ann", "ann-password")
	if res := d.LinkPassword("192.0.2.9", "tok", hash, "link-password"); res != OK {
		t.Errorf("the link from a known address: %v, want OK", res)
	}
	if res := d.Password(stranger(71), SSHPassword, "link:tok", "guess"); res != Wrong {
		t.Errorf("an account named like the link shares its delay: %v, want Wrong", res)
	}
}

// Past the free guesses one guess at a time is checked per target: two
// sent together do not both get through.
func TestOneGuessAtATimeWhenDelayed(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	th := &throttle{now: func() time.Time { return now }}
	tg := accountTarget("ann")
	var ends []func(bool)
	for i := range FreeGuesses {
		end, wait := th.begin(tg)
		if end == nil {
			t.Fatalf("free guess %d refused, wait %v", i, wait)
		}
		ends = append(ends, end)
	}
	if end, _ := th.begin(tg); end != nil {
		t.Error("a guess beyond the free ones while they are checked was let through")
	}
	for _, end := range ends {
		end(true)
	}
	now = now.Add(delayAfter(FreeGuesses))
	first, _ := th.begin(tg)
	second, _ := th.begin(tg)
	if first == nil || second != nil {
		t.Errorf("two guesses together after the delay: first let through %v, second %v; want true, false", first != nil, second != nil)
	}
}

// The table has a fixed size: a flood of guesses at new names evicts
// the targets with the fewest failures, never one under attack.
func TestThrottleTableBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	th := &throttle{now: func() time.Time { return now }}
	attacked := accountTarget("ann")
	for range FreeGuesses + 3 {
		end, _ := th.begin(attacked)
		if end == nil {
			now = now.Add(maxDelay)
			end, _ = th.begin(attacked)
		}
		end(true)
	}
	want := th.wait(attacked)
	for i := range 3 * targetSlots {
		if end, _ := th.begin(accountTarget(fmt.Sprint("name", i))); end != nil {
			end(true)
		}
	}
	if got := th.wait(attacked); got != want || got == 0 {
		t.Errorf("after %d other names, the attacked account's wait = %v, want %v", 3*targetSlots, got, want)
	}
	// A day without failures forgets them.
	now = now.Add(forgetAfter + time.Second)
	if end, _ := th.begin(attacked); end == nil {
		t.Error("a day later the account still waits")
	}
}

// A guess refused for its account's delay is a failure of its address
// too: an address that keeps asking is banned, as one guessing wrong is,
// instead of asking as fast as TLS goes.
func TestDelayedGuessesBanTheAddress(t *testing.T) {
	d, _, _ := clockedDoor(t)
	for i := range FreeGuesses {
		d.Password(stranger(i), basicPassword, "ann", "guess")
	}
	const flood = "203.0.113.9"
	for i := range MaxFailures {
		if res := d.Password(flood, basicPassword, "ann", "guess"); res != Delayed {
			t.Fatalf("guess %d at the waiting account = %v, want Delayed", i+1, res)
		}
	}
	if banned, _ := d.Banned(flood); !banned {
		t.Errorf("%d delayed guesses from one address earned no ban", MaxFailures)
	}
}

// A link's WebDAV asks its password by Basic, under any user name, and
// answers as a login is answered: a challenge when it is missing or
// wrong (or no live link is named), the link's delay as 429.
func TestLinkBasic(t *testing.T) {
	d, db, _ := clockedDoor(t)
	hash, _ := db.Hash("link-password")
	ask := func(token, hash string, basic ...string) (bool, *httptest.ResponseRecorder) {
		r := httptest.NewRequest("PROPFIND", "https://box/public.php/webdav/", nil)
		r.RemoteAddr = stranger(len(basic)+1) + ":4000"
		if len(basic) == 2 {
			r.SetBasicAuth(basic[0], basic[1])
		}
		w := httptest.NewRecorder()
		return d.LinkBasic(w, r, token, hash), w
	}
	if ok, _ := ask("open", ""); !ok {
		t.Error("a link without a password asked for one")
	}
	if ok, _ := ask("tok", hash, "anyone", "link-password"); !ok {
		t.Error("the link's password under any name was refused")
	}
	for _, tc := range [][]string{{"tok"}, {"tok", "tok", "guess"}, {"", "nothing", ""}} {
		ok, w := ask(tc[0], hash, tc[1:]...)
		if ok || w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("token %q, Basic %q: %v %d %q, want 401 and a challenge", tc[0], tc[1:], ok, w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
	for i := range FreeGuesses {
		d.LinkPassword(stranger(10+i), "tok", hash, "guess")
	}
	if ok, w := ask("tok", hash, "x", "link-password"); ok || w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Errorf("the link in its delay: %v %d Retry-After %q, want 429 and 1", ok, w.Code, w.Header().Get("Retry-After"))
	}
}

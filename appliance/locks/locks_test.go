package locks

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestExclusiveAndShared(t *testing.T) {
	tb := New()
	ex, err := tb.Create("u", "/a/f", 0, false, "", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Create("u", "/a/f", 0, true, "", time.Minute); !errors.Is(err, ErrLocked) {
		t.Errorf("shared over exclusive = %v, want ErrLocked", err)
	}
	if _, err := tb.Create("u", "/a", Infinity, false, "", time.Minute); !errors.Is(err, ErrLocked) {
		t.Errorf("depth-infinity lock over a locked member = %v, want ErrLocked", err)
	}
	if _, err := tb.Create("v", "/a/f", 0, false, "", time.Minute); err != nil {
		t.Errorf("another user's tree: %v", err)
	}
	tb.Unlock("u", "/a/f", ex.Token)
	s1, err1 := tb.Create("u", "/a/f", 0, true, "", time.Minute)
	s2, err2 := tb.Create("u", "/a/f", 0, true, "", time.Minute)
	if err1 != nil || err2 != nil {
		t.Fatalf("two shared locks: %v, %v", err1, err2)
	}
	if err := tb.Check("u", nil, Change{Path: "/a/f"}); !errors.Is(err, ErrLocked) {
		t.Errorf("write without a token = %v", err)
	}
	if err := tb.Check("u", []string{s2.Token}, Change{Path: "/a/f"}); err != nil {
		t.Errorf("write with one of the shared tokens = %v", err)
	}
	_ = s1
}

func TestCheckScopes(t *testing.T) {
	tb := New()
	dir, _ := tb.Create("u", "/d", 0, false, "", time.Minute)
	deep, _ := tb.Create("u", "/x/y/z", 0, false, "", time.Minute)
	for _, tc := range []struct {
		c    Change
		need string
	}{
		{Change{Path: "/d/new", Member: true}, dir.Token}, // membership of a depth-0 locked folder
		{Change{Path: "/d/new"}, ""},                      // content of a member: not covered by depth 0
		{Change{Path: "/x", Tree: true}, deep.Token},      // deleting a folder with a locked file below
		{Change{Path: "/x/y/z"}, deep.Token},
		{Change{Path: "/other", Tree: true, Member: true}, ""},
	} {
		err := tb.Check("u", nil, tc.c)
		if (err != nil) != (tc.need != "") {
			t.Errorf("Check(%+v) without tokens = %v", tc.c, err)
		}
		if tc.need != "" {
			if err := tb.Check("u", []string{tc.need}, tc.c); err != nil {
				t.Errorf("Check(%+v) with the token = %v", tc.c, err)
			}
		}
	}
}

func TestExpiryAndRefresh(t *testing.T) {
	now := time.Unix(1e9, 0)
	tb := New()
	tb.now = func() time.Time { return now }
	l, _ := tb.Create("u", "/f", 0, false, "", 10*time.Second)
	now = now.Add(8 * time.Second)
	if _, err := tb.Refresh("u", "/f", l.Token, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	now = now.Add(8 * time.Second)
	if !tb.Valid("u", "/f", l.Token) {
		t.Error("a refreshed lock expired early")
	}
	now = now.Add(3 * time.Second)
	if tb.Valid("u", "/f", l.Token) || tb.Check("u", nil, Change{Path: "/f"}) != nil {
		t.Error("an expired lock still binds")
	}
	if l, _ := tb.Create("u", "/g", 0, false, "", 100*time.Hour); l.Timeout != MaxTimeout {
		t.Errorf("timeout = %v, want it capped at %v", l.Timeout, MaxTimeout)
	}
}

// One user's files hold at most MaxPerUser locks; another user's are not
// touched by that, and an expired lock frees its place.
func TestLocksPerUserBounded(t *testing.T) {
	tb := New()
	now := time.Now()
	tb.now = func() time.Time { return now }
	for i := 0; i < MaxPerUser; i++ {
		if _, err := tb.Create("u", fmt.Sprintf("/f%d", i), 0, false, "", time.Minute); err != nil {
			t.Fatalf("lock %d: %v", i, err)
		}
	}
	if _, err := tb.Create("u", "/one-more", 0, false, "", time.Minute); !errors.Is(err, ErrTooMany) {
		t.Errorf("a lock past the cap = %v, want ErrTooMany", err)
	}
	if _, err := tb.Create("v", "/f", 0, false, "", time.Minute); err != nil {
		t.Errorf("another user's lock: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := tb.Create("u", "/one-more", 0, false, "", time.Minute); err != nil {
		t.Errorf("a lock once the others expired: %v", err)
	}
}

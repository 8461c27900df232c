package favorites

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bonesync/bonesync/appliance/state"
)

func TestMarkAndForget(t *testing.T) {
	dir := t.TempDir()
	s := Open(dir)
	for _, id := range []uint64{7, 6506282773270625951, 9} {
		if err := s.Mark("alice", id, true); err != nil {
			t.Fatal(err)
		}
	}
	s.Mark("alice", 9, false)
	s.Mark("bob", 7, true)
	// A fresh Set reads what was written, exact ids included.
	again := Open(dir)
	got, err := again.Of("alice")
	if err != nil || len(got) != 2 || !got[7] || !got[6506282773270625951] || got[9] {
		t.Errorf("alice's favourites = %v, %v", got, err)
	}
	if err := again.Forget("alice", []uint64{7, 1234}); err != nil {
		t.Fatal(err)
	}
	if got, _ := Open(dir).Of("alice"); len(got) != 1 {
		t.Errorf("after Forget: %v", got)
	}
	if got, _ := again.Of("bob"); !got[7] {
		t.Errorf("bob's = %v", got)
	}
	if _, err := s.Of("../x"); err == nil {
		t.Error("a bad user name was taken")
	}
	// Damaged: said, not taken for none.
	os.WriteFile(filepath.Join(dir, "carol.json"), []byte("[1,"), 0o600)
	if _, err := Open(dir).Of("carol"); !state.IsDamaged(err) {
		t.Errorf("a damaged file = %v, want Damaged", err)
	}
}

package update

import "testing"

// The eMMC's mark: set and cleared in boot.env with the slot kept, and
// never in what a copy of the partition gets.
func TestMovedMark(t *testing.T) {
	m := newMemCard(t, "1")
	c := &Card{Running: Running{Slot: "a"}, io: m}
	if err := c.SetMoved(true); err != nil {
		t.Fatal(err)
	}
	if e := ParseEnv(m[StateFile]); e[varMoved] != "1" || e[varSlot] != "a" {
		t.Errorf("boot.env after SetMoved(true) = %v", e)
	}
	at, cp, err := c.BootEnvCopy()
	if err != nil || len(cp) != envSize || at != 4096 {
		t.Fatalf("BootEnvCopy = %d, %d bytes, %v", at, len(cp), err)
	}
	if e := ParseEnv(cp); e[varMoved] != "" || e[varSlot] != "a" {
		t.Errorf("the copy's boot.env = %v, want slot a and no mark", e)
	}
	if err := c.SetMoved(false); err != nil {
		t.Fatal(err)
	}
	if e := ParseEnv(m[StateFile]); e[varMoved] != "" || e[varSlot] != "a" {
		t.Errorf("boot.env after SetMoved(false) = %v", e)
	}
}

package update

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// memCard is a card's preallocated files in memory, written in place as
// the device writer does: never grown.
type memCard map[string][]byte

func (m memCard) read(name string, n int64) ([]byte, error) {
	f, ok := m[name]
	if !ok || int64(len(f)) < n {
		return nil, fmt.Errorf("%s: no such file of %d bytes", name, n)
	}
	return bytes.Clone(f[:n]), nil
}

// offset: each file as if 4 KiB into the partition.
func (m memCard) offset(name string) (int64, error) {
	if _, ok := m[name]; !ok {
		return 0, fmt.Errorf("%s: no such file", name)
	}
	return 4096, nil
}

type memWriter struct {
	f   []byte
	pos int
}

func (w *memWriter) Write(p []byte) (int, error) {
	if w.pos+len(p) > len(w.f) {
		return 0, fmt.Errorf("past the file's end")
	}
	copy(w.f[w.pos:], p)
	w.pos += len(p)
	return len(p), nil
}

func (w *memWriter) Close() error { return nil }

func (m memCard) writer(name string, n int64) (io.WriteCloser, error) {
	f, ok := m[name]
	if !ok || int64(len(f)) < n {
		return nil, fmt.Errorf("%s: no such file of %d bytes", name, n)
	}
	return &memWriter{f: f}, nil
}

// newMemCard is a card as the image builder makes it: both slots holding
// version v, slot a the default.
func newMemCard(t *testing.T, v string) memCard {
	m := memCard{}
	st, _ := NewBootState("a")
	m[StateFile] = st
	for _, s := range []string{"a", "b"} {
		for _, n := range []string{KernelFile, InitrdFile, DTBDir + "/x.dtb"} {
			m[filepath.Join(SlotDir(s), n)] = make([]byte, 64<<10) // small capacities will do
		}
		env, _ := SlotInfo{Version: v, Kernel: 10, Initrd: 10}.Bytes()
		m[filepath.Join(SlotDir(s), SlotEnv)] = env
	}
	return m
}

// uboot does what boot.scr does with boot.env: it returns the slot it
// boots and whether on trial, and clears the trial.
func uboot(m memCard) (string, bool) {
	st := readBootState(ParseEnv(m[StateFile]))
	if st.Trial == "" {
		return st.Slot, false
	}
	b, _ := BootState{Slot: st.Slot, Tried: st.Trial}.env().Bytes()
	copy(m[StateFile], b)
	return st.Trial, true
}

// ownerTrusts is a state directory whose owner trusts testKey (and an
// image that trusts no key).
func ownerTrusts(t *testing.T) string {
	state := t.TempDir()
	old := BuiltInKeys
	BuiltInKeys = filepath.Join(state, "no-such-file")
	t.Cleanup(func() { BuiltInKeys = old })
	if _, err := Trust(state, testKeys[0].String()); err != nil {
		t.Fatal(err)
	}
	return state
}

func TestUpdateCycle(t *testing.T) {
	m := newMemCard(t, "1")
	state := ownerTrusts(t)
	boot := func() *Card {
		slot, trial := uboot(m)
		return &Card{Running: Running{Slot: slot, Trial: trial}, io: m, State: state}
	}
	c := boot()
	if st, _ := c.Status(); st.Slot != "a" || st.Trial || st.Default != "a" || st.OtherVersion != "1" || st.FailedTrial != "" {
		t.Errorf("a new card: %+v", st)
	}
	if done, err := c.Commit(); done || err != nil {
		t.Errorf("an ordinary boot committed: %v %v", done, err)
	}
	two := bundle(t, map[string]string{"zImage": "kernel 2", "initrd.img": "initrd 2"})
	var progress strings.Builder
	if _, err := c.Apply(bytes.NewReader(two), "qemu-virt", &progress); err != nil {
		t.Fatalf("Apply: %v\n%s", err, progress.String())
	}
	if got := string(m["slot-b/zImage"][:8]); got != "kernel 2" {
		t.Errorf("slot b's kernel starts %q", got)
	}
	if info, ok := readSlotInfo(ParseEnv(m["slot-b/slot.env"])); !ok || info.Version != "9.9" || info.Kernel != 8 {
		t.Errorf("slot b's slot.env: %+v", info)
	}
	if st, _ := c.Status(); st.Default != "b (once, on trial)" {
		t.Errorf("after Apply, the next boot: %q", st.Default)
	}

	// The trial boot: on trial until committed; no update meanwhile.
	c = boot()
	if st, _ := c.Status(); st.Slot != "b" || !st.Trial {
		t.Errorf("the trial boot: %+v", st)
	}
	if _, err := c.Apply(bytes.NewReader(two), "qemu-virt", io.Discard); err == nil {
		t.Error("an update was taken during a trial")
	}
	if done, err := c.Commit(); !done || err != nil {
		t.Fatalf("Commit: %v %v", done, err)
	}
	if st, _ := c.Status(); st.Trial || st.Default != "b" || st.FailedTrial != "" {
		t.Errorf("after the commit: %+v", st)
	}
	if done, _ := c.Commit(); done {
		t.Error("a second commit wrote again")
	}
	c = boot()
	if c.Running.Slot != "b" || c.Running.Trial {
		t.Errorf("after the commit the box boots %+v", c.Running)
	}

	// A broken update: tried once, never committed, the box comes back.
	three := bundle(t, map[string]string{"zImage": "kernel 3", "initrd.img": "initrd 3"})
	if _, err := c.Apply(bytes.NewReader(three), "qemu-virt", io.Discard); err != nil {
		t.Fatal(err)
	}
	boot() // the trial, which dies before Commit
	c = boot()
	if st, _ := c.Status(); st.Slot != "b" || st.Trial || st.FailedTrial != "version 9.9 (slot a)" {
		t.Errorf("after a failed trial: %+v", st)
	}

	// A bundle for another board, or not a bundle: refused before any
	// write, the other slot still a fallback.
	for what, b := range map[string][]byte{"another board": two, "not a bundle": []byte("hello")} {
		board := "qemu-virt"
		if what == "another board" {
			board = "beaglebone-black"
		}
		_, err := c.Apply(bytes.NewReader(b), board, io.Discard)
		if err == nil || errors.Is(err, ErrTouched) {
			t.Errorf("%s: %v", what, err)
		}
		if st, _ := c.Status(); st.OtherVersion != "9.9" {
			t.Errorf("%s emptied the other slot: %+v", what, st)
		}
	}

	// Bundles refused whole: not one byte of the card is written, so both
	// slots still boot. (Sent as a stream, spooled in state meanwhile.)
	damaged := bytes.Clone(two)
	damaged[bytes.Index(damaged, []byte("initrd 2"))] = 'I' // the last file
	files := map[string]string{"zImage": "kernel 4", "initrd.img": "initrd 4"}
	before := clone(m)
	for what, b := range map[string][]byte{
		"an unsigned bundle":             bundleSigned(t, files, nil),
		"a bundle signed by another key": bundleSigned(t, files, otherKey),
		"a bundle with a flipped byte":   damaged,
		"a bundle cut off":               two[:bytes.Index(two, []byte("initrd 2"))+4],
	} {
		_, err := c.Apply(struct{ io.Reader }{bytes.NewReader(b)}, "qemu-virt", io.Discard)
		var bad *BadBundle
		if !errors.As(err, &bad) || errors.Is(err, ErrTouched) {
			t.Errorf("%s: %v", what, err)
		}
		t.Logf("%s: %v", what, err)
		for name, was := range before {
			if !bytes.Equal(m[name], was) {
				t.Errorf("%s changed %s on the card", what, name)
			}
		}
	}
	if spools, _ := filepath.Glob(filepath.Join(state, spoolPattern)); len(spools) > 0 {
		t.Errorf("spooled bundles left behind: %v", spools)
	}

	// A card that writes other than it is given: the read-back finds it,
	// slot a no longer counts as bootable, the default is untouched.
	bad := &Card{Running: c.Running, io: failingCard{m, "slot-a/initrd.img"}, State: state}
	if _, err := bad.Apply(bytes.NewReader(two), "qemu-virt", io.Discard); !errors.Is(err, ErrTouched) || !strings.Contains(err.Error(), "reads back other than written") {
		t.Fatalf("a failing card: %v", err)
	}
	if st, _ := c.Status(); st.Default != "b" || st.OtherVersion != "" || !st.OtherIncomplete || st.FailedTrial != "" {
		t.Errorf("after a failing write: %+v", st)
	}
	if slot, trial := uboot(m); slot != "b" || trial {
		t.Errorf("after a failing write U-Boot boots %s (trial %v)", slot, trial)
	}
}

// failingCard flips the first byte written to the file bad.
type failingCard struct {
	memCard
	bad string
}

func (f failingCard) writer(name string, n int64) (io.WriteCloser, error) {
	w, err := f.memCard.writer(name, n)
	if err != nil || name != f.bad {
		return w, err
	}
	return flipFirst{w}, nil
}

type flipFirst struct{ io.WriteCloser }

func (f flipFirst) Write(p []byte) (int, error) {
	q := bytes.Clone(p)
	if len(q) > 0 {
		q[0] ^= 0xff
	}
	return f.WriteCloser.Write(q)
}

func clone(m memCard) memCard {
	c := memCard{}
	for k, v := range m {
		c[k] = bytes.Clone(v)
	}
	return c
}

func (m memCard) lock() (func(), error) { return func() {}, nil }

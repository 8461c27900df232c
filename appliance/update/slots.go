package update

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Card is the boot partition of the card the box booted from, mounted
// (read-only) at Dir; its files are overwritten in place through the
// block device (card_linux.go).
type Card struct {
	Dir     string
	State   string  // the state directory: the owner's update keys, bundles being received
	Device  string  // e.g. /dev/mmcblk0p1
	Running Running // this boot, from /proc/cmdline
	io      sectors
	now     func() time.Time // nil: time.Now
}

// sectors reads and overwrites the first n bytes of a file on the card,
// never changing its size or place.
type sectors interface {
	read(name string, n int64) ([]byte, error)
	writer(name string, n int64) (io.WriteCloser, error)
	// lock holds off every other process's Apply and Commit.
	lock() (unlock func(), err error)
	// offset is where name's first byte is, from the partition's start.
	offset(name string) (int64, error)
}

// ErrNotCard says the system was not booted by bonesync's boot script: a
// PC, a Debian install (updated by its package manager), or a card from
// before slots.
var ErrNotCard = errors.New("this system was not booted from a bonesync card with system slots (a Debian install is updated with apt)")

// Root is where the boot partition is mounted.
func (c *Card) Root() string { return c.Dir }

func (c *Card) read(name string, n int64) ([]byte, error) { return c.io.read(name, n) }

func (c *Card) writer(name string, n int64) (io.WriteCloser, error) { return c.io.writer(name, n) }

// write overwrites the start of name with b and waits for the card.
func (c *Card) write(name string, b []byte) error {
	w, err := c.writer(name, int64(len(b)))
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// Status reads boot.env and the other slot's slot.env.
func (c *Card) Status() (Status, error) {
	st := Status{Slot: c.Running.Slot, Other: otherSlot(c.Running.Slot)}
	bs, err := c.bootState()
	if err != nil {
		return st, err
	}
	st.Trial = c.Running.Trial && bs.Slot != c.Running.Slot // until committed
	st.Default = bs.Slot
	if bs.Trial != "" {
		st.Default = bs.Trial + " (once, on trial)"
	}
	info, ok, err := c.slotInfo(st.Other)
	if err != nil {
		return st, err
	}
	if ok {
		st.OtherVersion = info.Version
	} else {
		st.OtherIncomplete = true
	}
	// A trial of the other slot that ended back here; if the slot has been
	// written since (not bootable now), that is old news.
	if ok && !c.Running.Trial && bs.Tried == st.Other && bs.Slot == c.Running.Slot {
		st.FailedTrial = fmt.Sprintf("version %s (slot %s)", info.Version, st.Other)
	}
	return st, nil
}

func (c *Card) bootState() (BootState, error) {
	b, err := c.read(StateFile, envSize)
	if err != nil {
		return BootState{}, err
	}
	return readBootState(ParseEnv(b)), nil
}

func (c *Card) slotInfo(slot string) (SlotInfo, bool, error) {
	b, err := c.read(filepath.Join(SlotDir(slot), SlotEnv), envSize)
	if err != nil {
		return SlotInfo{}, false, err
	}
	i, ok := readSlotInfo(ParseEnv(b))
	return i, ok, nil
}

// Commit makes the running slot the default, if this is a trial boot and
// it is not the default yet, and records its version as the highest run
// (highestFile) if it is higher. It writes nothing otherwise: an ordinary
// boot leaves the card alone. done with an error says the slot is the
// default but its version was not recorded.
func (c *Card) Commit() (bool, error) {
	unlock, err := c.io.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	bs, err := c.bootState()
	if err != nil {
		return false, err
	}
	if bs.Slot == c.Running.Slot && bs.Tried != c.Running.Slot {
		return false, nil
	}
	if !c.Running.Trial {
		return false, nil // booted the default: a fallback, not a trial
	}
	b, err := BootState{Slot: c.Running.Slot}.env().Bytes()
	if err != nil {
		return false, err
	}
	if err := c.write(StateFile, b); err != nil {
		return false, err
	}
	// Where the highest version run is raised: a version counts as run
	// once it has served on trial, not when it was only written.
	info, ok, err := c.slotInfo(c.Running.Slot)
	if err == nil && ok {
		err = recordHighest(c.State, info.Version)
	}
	return true, err
}

// ErrTouched marks an Apply that failed after it began to write the
// other slot: that slot no longer boots (the running one still does).
var ErrTouched = errors.New("the other slot was being written and no longer holds a bootable system")

// Apply checks the bundle from r whole (its signature by a trusted key,
// its board, every file's SHA-256, and that its version is not older than
// the highest run, unless the console allowed it: downgrade.go), then writes it into the slot not
// running, reads it back, and arms it for one trial boot. board is the
// box's (board.json's name). The bundle is first copied to the state
// directory, so that nothing is written to the card for a bundle that
// turns out bad or cut off, and what was checked is what is written. One
// Apply or Commit at a time, box-wide (a lock on the device). A refused
// bundle changes nothing; a failure once writing began (the card's, or
// the copy's) leaves the other slot unbootable (the error wraps
// ErrTouched); the next boot runs the running slot either way.
func (c *Card) Apply(r io.Reader, board string, progress io.Writer) (*Manifest, error) {
	unlock, err := c.io.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	bs, err := c.bootState()
	if err != nil {
		return nil, err
	}
	if bs.Slot != c.Running.Slot && c.Running.Trial {
		return nil, errors.New("this version is itself on trial: wait until it serves (it is then the default) and try again")
	}
	trusted, err := Trusted(c.State)
	if err != nil {
		return nil, fmt.Errorf("the trusted update keys: %w", err)
	}
	// Running the fallback (the default slot did not load) is fine: the
	// update goes over the default, and arming makes this slot the default.
	target := otherSlot(c.Running.Slot)
	dir := SlotDir(target)
	running, _, err := c.slotInfo(c.Running.Slot)
	if err != nil {
		return nil, err
	}
	fits := func(m *Manifest) error {
		if running.DTB > 0 && !m.hasDTB() {
			return &BadBundle{fmt.Errorf("the bundle has no device tree, and this board boots with one")}
		}
		return nil
	}
	rs, done, err := c.spool(r)
	if err != nil {
		return nil, err
	}
	defer done()
	// The first pass reads it all and writes nothing; it also keeps
	// updates moving forward (downgrade.go).
	downgrade := false
	checked, err := ReadBundle(rs, board, trusted, func(m *Manifest) (Sink, error) {
		if err := fits(m); err != nil {
			return nil, err
		}
		downgrade, err = c.checkVersion(m.Version, running.Version)
		return discard{}, err
	})
	if err != nil {
		return nil, err
	}
	if downgrade {
		if err := c.spendAllowance(); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "update: version %s is older than this box has run; allowed once at the console\n", checked.Version)
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	touched := false
	sink := &slotSink{c: c, dir: dir}
	m, err := ReadBundle(rs, board, trusted, func(m *Manifest) (Sink, error) {
		if err := fits(m); err != nil {
			return nil, err
		}
		if m.Version != checked.Version { // the spool is the box's own: cannot happen, and is refused if it does
			return nil, &BadBundle{fmt.Errorf("the bundle changed while it was checked")}
		}
		fmt.Fprintf(progress, "update: version %s, %d files, into slot %s\n", m.Version, len(m.Files), target)
		// The target stops being bootable before its first byte is
		// written: a cut from here on leaves it skipped by the boot script.
		if err := c.write(filepath.Join(dir, SlotEnv), make([]byte, envSize)); err != nil {
			return nil, fmt.Errorf("slot %s: %w", target, err)
		}
		touched = true
		fmt.Fprintf(progress, "update: writing slot %s (not bootable until it is read back)\n", target)
		return sink, nil
	})
	if cerr := sink.close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		if touched {
			return nil, fmt.Errorf("%w (slot %s): %w", ErrTouched, target, err)
		}
		return nil, err
	}
	if err := c.verifyAndArm(m, target, progress); err != nil {
		return nil, fmt.Errorf("%w (slot %s): %w", ErrTouched, target, err)
	}
	return m, nil
}

// verifyAndArm reads the slot target back from the card, past every
// cache, checks it against m, and arms it for one trial boot.
func (c *Card) verifyAndArm(m *Manifest, target string, progress io.Writer) error {
	dir := SlotDir(target)
	info := SlotInfo{Version: m.Version}
	for _, f := range m.Files {
		b, err := c.read(filepath.Join(dir, f.Name), f.Size)
		if err != nil {
			return err
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 {
			return fmt.Errorf("%s reads back other than written: the card may be failing", f.Name)
		}
		switch {
		case f.Name == KernelFile:
			info.Kernel = f.Size
		case f.Name == InitrdFile:
			info.Initrd = f.Size
		default:
			info.DTB = f.Size
		}
	}
	fmt.Fprintf(progress, "update: slot %s read back and verified\n", target)
	se, err := info.Bytes()
	if err != nil {
		return err
	}
	if err := c.write(filepath.Join(dir, SlotEnv), se); err != nil {
		return err
	}
	armed, err := BootState{Slot: c.Running.Slot, Trial: target}.env().Bytes()
	if err != nil {
		return err
	}
	if err := c.write(StateFile, armed); err != nil {
		return err
	}
	fmt.Fprintf(progress, "update: slot %s armed: the next boot tries version %s once\n", target, m.Version)
	return nil
}

// spool is r copied to a file of the box's own in the state directory
// (never read twice where it came from: a file in someone's folder could
// be swapped between the check and the write); done removes it.
func (c *Card) spool(r io.Reader) (io.ReadSeeker, func(), error) {
	f, err := os.CreateTemp(c.State, spoolPattern)
	if err != nil {
		return nil, nil, fmt.Errorf("a place for the bundle: %w", err)
	}
	done := func() { f.Close(); os.Remove(f.Name()) }
	buf := make([]byte, 64<<10)
	for n := int64(0); ; {
		k, rerr := r.Read(buf)
		if _, err := f.Write(buf[:k]); err != nil {
			done()
			return nil, nil, fmt.Errorf("keeping the bundle while it is checked: %w", err)
		}
		n += int64(k)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			done()
			return nil, nil, &BadBundle{fmt.Errorf("the bundle broke off after %d bytes: %w", n, rerr)}
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		done()
		return nil, nil, err
	}
	return f, done, nil
}

// spoolPattern names bundles being received; Open removes any a power
// cut left.
const spoolPattern = "update-*.spool"

// discard is a Sink that keeps nothing: the checking pass.
type discard struct{}

func (discard) Begin(ManifestFile) (io.Writer, error) { return io.Discard, nil }

// slotSink writes each bundle file over its preallocated file in a slot.
type slotSink struct {
	c    *Card
	dir  string
	open []io.WriteCloser
}

func (s *slotSink) Begin(f ManifestFile) (io.Writer, error) {
	w, err := s.c.writer(filepath.Join(s.dir, f.Name), f.Size)
	if err != nil {
		return nil, err
	}
	s.open = append(s.open, w)
	return w, nil
}

// close closes every file's writer (each syncs the card).
func (s *slotSink) close() error {
	var errs []error
	for _, w := range s.open {
		errs = append(errs, w.Close())
	}
	s.open = nil
	return errors.Join(errs...)
}

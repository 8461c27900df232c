package boot

// The console's `emmc`: the board's eMMC, and moving the system onto it
// (package emmc does the disk writing; here: which disk, what to copy,
// the server stopped meanwhile, the card's mark, the record the server
// shows). docs/emmc.md says what each step leaves after a power cut.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/datadisk"
	"github.com/bonesync/bonesync/appliance/emmc"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/partition"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/update"
)

// Where the eMMC's new data partition is filled, and where the card's
// boot partition is mounted to clear its mark from the eMMC system.
const (
	emmcMount     = "/run/emmc-data"
	cardBootMount = "/run/card-boot"
)

// flasher is the console's and the admin page's eMMC: which disk it is,
// what it holds, and the flash (the box's state is its System's).
type flasher struct{ s *System }

// disk is the board's eMMC as the kernel names it now: found by its
// controller in sysfs when the board data names one, else by name.
func (f flasher) disk() (string, error) {
	s := f.s
	if s.Board == nil || s.Board.EMMC == nil {
		return "", errors.New("this board has no eMMC (board data)")
	}
	e := s.Board.EMMC
	if e.Host == "" {
		if _, err := os.Stat(filepath.Join(sysBlock, e.Device)); err != nil {
			return "", fmt.Errorf("no eMMC: no %s", e.Device)
		}
		return e.Device, nil
	}
	// The user area only: mmcblk1boot0, mmcblk1boot1 and mmcblk1rpmb are
	// disks too, on the same host.
	hw := regexp.MustCompile(`boot[0-9]+$|rpmb$`)
	entries, _ := os.ReadDir("/sys/block")
	for _, en := range entries {
		path, err := filepath.EvalSymlinks(filepath.Join("/sys/block", en.Name()))
		if err == nil && !hw.MatchString(en.Name()) && strings.Contains(path, "/"+e.Host+"/") {
			return en.Name(), nil
		}
	}
	return "", fmt.Errorf("no eMMC: no disk on its controller %s", e.Host)
}

// running says whether this system runs from the eMMC.
func (f flasher) running() bool {
	s := f.s
	name, err := f.disk()
	return err == nil && s.disk != nil && s.disk.Name == name
}

// emmcCommand is the console's `emmc`, `emmc flash` and `emmc card-boot`.
func (s *System) emmcCommand(ctx context.Context, args []string) {
	f := flasher{s}
	switch {
	case len(args) == 0:
		f.status()
	case args[0] == "flash" && len(args) == 1:
		if err := f.flash(ctx); err != nil {
			fmt.Fprintf(s.Console, "emmc flash: %v\n", err)
			return
		}
		fmt.Fprintf(s.Console, "emmc flash: done and verified. Now %s\n", emmc.Advice)
	case args[0] == "card-boot" && len(args) == 1:
		if err := f.cardBoot(); err != nil {
			fmt.Fprintf(s.Console, "emmc card-boot: %v\n", err)
			return
		}
		fmt.Fprintln(s.Console, "emmc card-boot: the card boots its own system again (hold S2 at power-on to start from it; without S2 the board starts the eMMC's U-Boot, which now also runs the card's system first)")
	default:
		fmt.Fprintln(s.Console, "usage: emmc, emmc flash, emmc card-boot")
	}
}

// status says whether there is an eMMC, its size, and what is on it.
func (f flasher) status() {
	s := f.s
	name, err := f.disk()
	if err != nil {
		fmt.Fprintf(s.Console, "emmc:    %v\n", err)
		return
	}
	size, _ := sysfsInt(filepath.Join(sysBlock, name, "size"))
	fmt.Fprintf(s.Console, "emmc:    /dev/%s, %.1f GB (%s)\n", name, float64(size*512)/1e9, s.Board.EMMC.What)
	fmt.Fprintf(s.Console, "on it:   %s\n", emmcHolds("/dev/"+name, "/dev/"+partition.Name(name, 2)))
	if f.running() {
		fmt.Fprintln(s.Console, "running: from the eMMC")
	} else if s.disk != nil {
		fmt.Fprintf(s.Console, "running: from the card (/dev/%s)\n", s.disk.Name)
	}
	if r, ok, err := emmc.ReadRecord(StateDir); err != nil {
		fmt.Fprintf(s.Console, "flash:   %v\n", err)
	} else if ok {
		fmt.Fprintf(s.Console, "flash:   %s\n", r)
	}
}

// emmcHolds says what the disk at path holds, from its first sectors and
// its data partition's file system (data).
func emmcHolds(path, data string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	mbr, boot := make([]byte, 512), make([]byte, 512)
	if _, err := f.ReadAt(mbr, 0); err != nil {
		return fmt.Sprintf("unreadable: %v", err)
	}
	f.ReadAt(boot, 1<<20) // dropped: a short eMMC reads as nothing there
	sig, ok := partition.Signature(mbr)
	switch {
	case ok:
		if fs, _ := datadisk.Probe(data); fs.Label == DataLabel {
			return fmt.Sprintf("a bonesync system (boot partition %s)", partition.PartUUID(sig, 1))
		}
		return "another system (a partition table, no bonesync data partition): `emmc flash` replaces it"
	case string(boot[82:87]) == "FAT32":
		return "a copy that did not finish (no partition table: nothing boots it): `emmc flash` starts again"
	case strings.Trim(string(mbr), "\x00") == "":
		return "nothing (blank)"
	}
	return "no partition table: nothing the board boots"
}

// flash copies the running system to the eMMC, verifies it, makes it
// bootable and marks the card to step aside.
func (f flasher) flash(ctx context.Context) error {
	s := f.s
	if !s.flashing.CompareAndSwap(false, true) {
		return errors.New("a flash is under way")
	}
	defer s.flashing.Store(false)
	job, files, err := f.job()
	if err != nil {
		return err
	}
	rec := emmc.Record{Phase: emmc.Flashing, Device: filepath.Base(job.EMMC), Files: files, Started: time.Now()}
	rec.Size, _ = sysfsInt(filepath.Join(sysBlock, rec.Device, "size"))
	rec.Size *= 512
	if err := rec.Write(StateDir); err != nil {
		return err
	}
	// The server is stopped for the whole copy: the copy is the box as of
	// one moment, and no update (/admin/update) writes the card meanwhile.
	s.Log.Info("emmc: stopping the server for the copy")
	done := make(chan error, 1)
	s.Server.Restart(func() {
		// A card marked by an earlier flash steps aside at boot: the
		// mark goes before the eMMC is wiped, or a cut during this copy
		// would leave nothing that boots.
		if err := s.card.SetMoved(false); err != nil {
			done <- fmt.Errorf("the card's mark from the last flash could not be cleared (nothing written to the eMMC): %w", err)
			return
		}
		done <- job.Run(ctx)
	})
	err = <-done
	if err == nil {
		if e := s.card.SetMoved(true); e != nil {
			s.Log.Warn("emmc: the eMMC is ready, but the card could not be marked to step aside: take it out before powering on", "err", e)
		}
	}
	rec.Finished, rec.Phase = time.Now(), emmc.Done
	if err != nil {
		rec.Phase, rec.Error = emmc.Failed, err.Error()
	}
	if e := rec.Write(StateDir); e != nil && err == nil {
		err = e
	}
	if err == nil {
		s.Log.Info("emmc: the eMMC is verified and bootable", "dev", job.EMMC)
	}
	return err
}

// flashAsked is a flash the server asked for (the admin page): it runs in
// the background, and its record says how it went, a refusal included.
func (s *System) flashAsked() {
	f := flasher{s}
	err := f.flash(context.Background())
	if err == nil {
		fmt.Fprintf(s.Console, "emmc flash (from the admin page): done and verified. Now %s\n", emmc.Advice)
		return
	}
	s.Log.Error("emmc flash (from the admin page) did not complete", "err", err)
	if r, ok, _ := emmc.ReadRecord(StateDir); ok && r.Phase == emmc.Flashing {
		return // another flash runs, and says how it goes
	}
	now := time.Now()
	rec := emmc.Record{Phase: emmc.Failed, Error: err.Error(), Started: now, Finished: now}
	if e := rec.Write(StateDir); e != nil {
		s.Log.Error("emmc: cannot record the refusal for the admin page", "err", e)
	}
}

// job is the flash to run, or why there is none: no eMMC, running
// from it, an update on trial, files being moved, or no room.
func (f flasher) job() (*emmc.Job, bool, error) {
	s := f.s
	name, err := f.disk()
	if err != nil {
		return nil, false, err
	}
	switch {
	case s.disk == nil || s.card == nil:
		return nil, false, errors.New("not booted from a bonesync card with system slots")
	case s.disk.Name == name:
		return nil, false, errors.New("this system runs from the eMMC already")
	case s.onTrial():
		return nil, false, errors.New("an update is on trial: flash once it has become the default")
	}
	if rec, ok, _ := datadisk.ReadRecord(StateDir); ok && rec.Phase == datadisk.Moving {
		return nil, false, errors.New("the files are being moved to a USB disk: flash once the move is done")
	}
	files := s.filesDir() == FilesDir
	if err := f.room(name, files); err != nil {
		return nil, false, err
	}
	envAt, env, err := s.card.BootEnvCopy()
	if err != nil {
		return nil, false, err
	}
	cardSig, _ := diskSignature("/dev/" + s.disk.Name)
	sig, err := emmc.NewSignature(cardSig)
	if err != nil {
		return nil, false, err
	}
	return &emmc.Job{
		Card: "/dev/" + s.disk.Name, EMMC: "/dev/" + name, BootEnvAt: envAt, BootEnv: env,
		Signature: sig, DataLabel: DataLabel, Mount: emmcMount, Log: s.Log, Now: time.Now(),
		Fill: func(ctx context.Context, root string) error { return f.fill(ctx, root, files) },
	}, files, nil
}

// room refuses a flash whose state (and files, when they are on the
// card) would not fit the eMMC's data partition, before anything is
// written.
func (f flasher) room(name string, files bool) error {
	s := f.s
	sectors, err := sysfsInt(filepath.Join(sysBlock, name, "size"))
	if err != nil {
		return err
	}
	card, err := os.Open("/dev/" + s.disk.Name)
	if err != nil {
		return err
	}
	mbr := make([]byte, 512)
	_, err = card.ReadAt(mbr, 0)
	card.Close()
	if err != nil {
		return err
	}
	room := emmc.DataPart(partition.Entry(mbr, 1), sectors*512).Size * 9 / 10 // the file system's own
	need, err := store.FilesSize(os.DirFS(StateDir), ".")
	if err != nil {
		return fmt.Errorf("the state's size: %w", err)
	}
	if files {
		n, err := store.FilesSize(os.DirFS(FilesDir), ".")
		if err != nil {
			return fmt.Errorf("the files' size: %w", err)
		}
		need += n
	}
	if need > room {
		return fmt.Errorf("the state and the files (%.1f GB) do not fit on the eMMC (%.1f GB): move the files to a USB disk first (`disk adopt DEVICE`, docs/data-disk.md), then flash", float64(need)/1e9, float64(room)/1e9)
	}
	return nil
}

// fill copies the state, and the files when they are on the card,
// into the eMMC's data partition at root (the server is stopped: see
// flash). Each file is read back from the eMMC and compared by SHA-1
// (datadisk.Move).
func (f flasher) fill(ctx context.Context, root string, files bool) error {
	s := f.s
	if err := datadisk.Move(ctx, StateDir, filepath.Join(root, "bonesync"), nil, time.Time{}); err != nil {
		return err
	}
	if files {
		s.Log.Info("emmc: copying the files")
		if err := datadisk.Move(ctx, FilesDir, filepath.Join(root, "files"), nil, time.Time{}); err != nil {
			return err
		}
	}
	// The flash's record and the card's health (its writes, its errors)
	// are the card's: the eMMC's state starts without them.
	state := filepath.Join(root, "bonesync")
	if err := os.Remove(filepath.Join(health.Dir(state), s.disk.Name+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Remove(filepath.Join(state, emmc.RecordFile))
}

// cardBoot clears the card's mark, so that its boot script boots it
// again: the running card's own, or from the eMMC system the card's in
// the slot (its boot partition mounted read-only for the moment).
func (f flasher) cardBoot() error {
	s := f.s
	if s.flashing.Load() {
		return errors.New("an eMMC flash is under way: the card's mark is its to set")
	}
	if !f.running() {
		if s.card == nil {
			return errors.New("not booted from a bonesync card with system slots")
		}
		return s.card.SetMoved(false)
	}
	name := f.otherCard()
	if name == "" {
		return errors.New("no bonesync card is in the slot")
	}
	if err := os.MkdirAll(cardBootMount, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("/dev/"+partition.Name(name, 1), cardBootMount, "vfat", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "iocharset=iso8859-1,codepage=437"); err != nil {
		return fmt.Errorf("mount the card's boot partition: %w", err)
	}
	defer unix.Unmount(cardBootMount, 0) // dropped: mounted read-only; its writes went through the device, synced
	c, err := update.Open(cardBootMount, "")
	if err != nil {
		return fmt.Errorf("the card's boot partition: %w", err)
	}
	return c.SetMoved(false)
}

// otherCard is a disk other than the one booted from and the eMMC that
// holds a bonesync system, "" if none.
func (f flasher) otherCard() string {
	s := f.s
	self, _ := f.disk()
	entries, _ := os.ReadDir(sysBlock)
	for _, e := range entries {
		n := e.Name()
		if n == self || (s.disk != nil && n == s.disk.Name) {
			continue
		}
		if _, err := os.Stat(filepath.Join(sysBlock, n, "partition")); err == nil {
			continue
		}
		if fs, _ := datadisk.Probe("/dev/" + partition.Name(n, 2)); fs.Label == DataLabel {
			return n
		}
	}
	return ""
}

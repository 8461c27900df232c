package boot

// The data disk: PID 1 finds the USB disk that holds the users' files
// (package datadisk), mounts it at /data, watches it come and go, and
// tells the server where the files are, or why there are none
// (-files-gone: it answers 503). `disk adopt` formats a new disk and moves
// the card's files onto it while the server serves; the server is stopped
// only for the last pass, and the switch is one write of the record on the
// card (datadisk.RecordFile).

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/datadisk"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
)

const (
	DataMount  = "/data"                     // the data disk
	DataFiles  = DataMount + "/files"        // the store on it
	dataMoving = DataMount + "/files.moving" // the store being moved there
	sysBlock   = "/sys/class/block"
)

// dataDisk is PID 1's hold on the data disk.
type dataDisk struct {
	mu       sync.Mutex
	want     string // datadisk.Card, or the label or UUID of the disk
	dev      string // the device mounted at DataMount, "" if none
	gone     string // why the files cannot be served, "" if they can
	adopting bool   // a disk is being formatted or filled
}

// filesDir is where the server finds the users' files.
func (s *System) filesDir() string {
	if d := s.data; d != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.want != datadisk.Card {
			return DataFiles
		}
	}
	return FilesDir
}

// filesGone is why the files cannot be reached now, "" if they can.
func (s *System) filesGone() string {
	if d := s.data; d != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.gone
	}
	return ""
}

// filesArgs are the server's flags for its files.
func (s *System) filesArgs() []string {
	a := []string{"-files", s.filesDir()}
	if d := s.data; d != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.gone != "" {
			a = append(a, "-files-gone", d.gone)
		}
	}
	return a
}

// findDataDisk is the boot step: which disk holds the files, and is it
// there. A disk that is named and missing is waited for in the background;
// the server serves no files meanwhile, never the card's in their place.
func findDataDisk(_ context.Context, s *System) error {
	d := &dataDisk{want: datadisk.Card}
	s.data = d
	rec, adopted, err := datadisk.ReadRecord(StateDir)
	if err != nil {
		d.want, d.gone = "the adopted disk", fmt.Sprintf("the data disk's record is unreadable (%v)", err)
		return err
	}
	d.want = datadisk.Choose(s.Config.DataDisk, rec, adopted)
	if d.want == datadisk.Card {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	deadline := time.Now().Add(15 * time.Second) // USB disks take a few seconds to appear
	for {
		err := d.mountLocked(s, rec, adopted)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			placeholder()
			d.gone = err.Error()
			if errors.Is(err, datadisk.ErrMissing) {
				d.gone = fmt.Sprintf("the data disk (%s) is not plugged in", d.want)
			}
			s.Log.Warn("the data disk is not there: serving no files until it is", "disk", d.want, "why", err)
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// placeholder mounts an empty read-only file system at DataMount while no
// disk is there, so that nothing (a server still stopping, a console
// command) can write the users' files into the RAM disk under it.
func placeholder() {
	unix.Mount("nodisk", DataMount, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
}

// unmountData takes whatever is at DataMount off it (the disk, detached if
// busy, or the placeholder).
func unmountData() {
	for unix.Unmount(DataMount, unix.MNT_DETACH) == nil {
	}
}

// mountLocked mounts the wanted disk at DataMount, with d.mu held.
func (d *dataDisk) mountLocked(s *System, rec datadisk.Record, adopted bool) error {
	dev, err := datadisk.Find(datadisk.Devices(sysBlock, s.notDataDisks()...), d.want)
	if err != nil {
		return err
	}
	unmountData()
	if err := unix.Mount(dev.Path(), DataMount, "ext4", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOATIME, "errors=remount-ro"); err != nil {
		placeholder()
		return fmt.Errorf("the data disk %s is there but does not mount: %w", dev.Path(), err)
	}
	switched := adopted && rec.Phase == datadisk.Switched && rec.UUID == dev.FS.UUID
	if _, err := os.Stat(DataFiles); errors.Is(err, fs.ErrNotExist) && switched {
		// The switch was recorded and a power cut came before the rename.
		if err := os.Rename(dataMoving, DataFiles); err == nil {
			state.SyncDir(DataMount) // dropped: a cut that undoes the rename is met here again at the next start
		}
	}
	if _, err := os.Stat(DataFiles); errors.Is(err, fs.ErrNotExist) {
		if switched || cardHasFiles() {
			unmountData()
			placeholder()
			if switched {
				return fmt.Errorf("the data disk %s holds no files folder: it is not as the move left it", dev.FS.UUID)
			}
			return fmt.Errorf("the disk %s (%s) holds no bonesync files and the card does: `disk adopt %s erase` on the console moves them onto it", dev.Name, dev.FS.UUID, dev.Disk)
		}
		if err := os.Mkdir(DataFiles, 0o700); err != nil {
			unmountData()
			placeholder()
			return fmt.Errorf("make the files folder on the data disk: %w", err)
		}
	}
	d.dev, d.gone = dev.Name, ""
	s.Log.Info("data disk mounted", "dev", dev.Path(), "uuid", dev.FS.UUID, "on", DataMount)
	return nil
}

// cardName is the disk the box booted from, never a data disk.
func (s *System) cardName() string {
	if s.disk != nil {
		return s.disk.Name
	}
	return ""
}

// notDataDisks are the disks never offered as a data disk: the one booted
// from, and the board's eMMC (which holds the system, or will).
func (s *System) notDataDisks() []string {
	skip := []string{s.cardName()}
	if name, err := (flasher{s}).disk(); err == nil {
		skip = append(skip, name)
	}
	return skip
}

// cardHasFiles says whether the card's store holds any user's file.
func cardHasFiles() bool {
	found := errors.New("found")
	err := filepath.WalkDir(FilesDir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() && e.Name() == ".bonesync" {
			return filepath.SkipDir
		}
		if e.Type().IsRegular() {
			return found
		}
		return nil
	})
	return err == found
}

// keepDataDisk runs beside the server: it finishes a move a power cut
// stopped, starts one the config asks for (data_disk_format), and watches
// the disk: unplugged, the server restarts serving no files; plugged back,
// it restarts serving them.
func (s *System) keepDataDisk(ctx context.Context) {
	d := s.data
	if d == nil {
		return
	}
	rec, adopted, _ := datadisk.ReadRecord(StateDir)
	switch {
	case adopted && rec.Phase == datadisk.Moving:
		s.Log.Info("finishing the move to the data disk a stop interrupted", "uuid", rec.UUID)
		go s.adoptFrom(ctx, rec)
	case s.Config.DataDiskFormat != "" && !(adopted && rec.Serial == s.Config.DataDiskFormat && rec.Phase != datadisk.Failed):
		go s.adoptBySerial(ctx, s.Config.DataDiskFormat)
	case adopted && rec.Phase == datadisk.Switched:
		go s.removeCardFiles()
	}
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d.mu.Lock()
		if d.want == datadisk.Card || d.adopting {
			d.mu.Unlock()
			continue
		}
		var between func() // set: restart the server, running it in between
		if d.dev != "" {
			if _, err := os.Stat(filepath.Join(sysBlock, d.dev)); err != nil {
				d.gone = fmt.Sprintf("the data disk (%s) was unplugged at %s", d.want, time.Now().Format("15:04"))
				s.Log.Warn("the data disk was unplugged: serving no files until it is back", "dev", d.dev)
				d.dev = ""
				// Taken off once the server has stopped, with an empty
				// read-only placeholder put there before the next starts.
				between = func() { unmountData(); placeholder() }
			}
		} else {
			rec, adopted, _ := datadisk.ReadRecord(StateDir)
			if err := d.mountLocked(s, rec, adopted); err == nil {
				s.Log.Info("the data disk is back: serving the files again")
				between = func() {}
			} else if !errors.Is(err, datadisk.ErrMissing) {
				d.gone = err.Error() // there, but not usable: say why
			}
		}
		d.mu.Unlock()
		if between != nil && s.Server != nil {
			s.Server.Restart(between)
		}
	}
}

// adoptCommand is the console's `disk adopt DEVICE [erase]`.
func (s *System) adoptCommand(ctx context.Context, name string, erase bool) error {
	d := s.data
	if d == nil {
		return errors.New("the boot did not get as far as the disks")
	}
	devs := datadisk.Devices(sysBlock, s.notDataDisks()...)
	var dev *datadisk.Device
	var parts []string
	for i := range devs {
		if devs[i].Name == name {
			dev = &devs[i]
		}
		if devs[i].Disk == name && devs[i].Name != name {
			parts = append(parts, devs[i].Name)
		}
	}
	switch {
	case dev == nil:
		return fmt.Errorf("no disk %s (the card cannot be adopted; `disk` lists the disks)", name)
	case dev.Disk != dev.Name:
		return fmt.Errorf("%s is a partition: adopt the whole disk, %s (it is erased)", name, dev.Disk)
	case !erase && (dev.FS != nil || len(parts) > 0 || !blank(dev.Path())):
		return fmt.Errorf("%s holds data (%s): to erase it and move the files onto it, type: disk adopt %s erase", name, *dev, name)
	}
	used, _ := store.FilesSize(os.DirFS(FilesDir), ".")
	if dev.Size < used+used/10+256<<20 {
		return fmt.Errorf("%s holds %.1f GB: the files take %.1f GB", name, float64(dev.Size)/1e9, float64(used)/1e9)
	}
	return s.adopt(ctx, *dev)
}

// adoptBySerial is data_disk_format: the disk with that serial, erased.
func (s *System) adoptBySerial(ctx context.Context, serial string) {
	for i := 0; i < 30; i++ { // USB disks take a few seconds to appear
		for _, dev := range datadisk.Devices(sysBlock, s.notDataDisks()...) {
			if dev.Serial == serial && dev.Disk == dev.Name {
				if bonesyncDisk(dev) {
					// Never erased by a line left in the config: it may
					// hold the files (a card reflashed, the state lost).
					s.Log.Error("data_disk_format: that disk is a bonesync data disk already; set data_disk = auto to use it, or erase it with disk adopt on the console", "serial", serial)
					return
				}
				if err := s.adopt(ctx, dev); err != nil {
					s.Log.Error("data_disk_format: cannot adopt the disk", "serial", serial, "err", err)
				}
				return
			}
		}
		time.Sleep(time.Second)
	}
	s.Log.Error("data_disk_format: no USB disk has that serial (the console's `disk` lists them)", "serial", serial)
}

// bonesyncDisk says whether dev (or a partition of it) holds a file system
// labelled as a data disk.
func bonesyncDisk(dev datadisk.Device) bool {
	for _, p := range datadisk.Devices(sysBlock, "") {
		if p.Disk == dev.Disk && p.FS != nil && p.FS.Label == datadisk.Label {
			return true
		}
	}
	return false
}

// adopt formats dev and starts moving the files onto it.
func (s *System) adopt(ctx context.Context, dev datadisk.Device) error {
	d := s.data
	d.mu.Lock()
	switch {
	case d.adopting:
		d.mu.Unlock()
		return errors.New("a disk is being adopted already")
	case d.want != datadisk.Card:
		d.mu.Unlock()
		return fmt.Errorf("the files are on a disk already (%s)", d.want)
	}
	d.adopting = true
	d.mu.Unlock()
	done := func() { d.mu.Lock(); d.adopting = false; d.mu.Unlock() }
	var uuid [16]byte
	rand.Read(uuid[:])
	uuid[6] = uuid[6]&0x0f | 0x40 // version 4
	uuid[8] = uuid[8]&0x3f | 0x80
	s.Log.Info("erasing and formatting the disk", "dev", dev.Path(), "model", dev.Model, "gb", fmt.Sprintf("%.1f", float64(dev.Size)/1e9))
	f, err := os.OpenFile(dev.Path(), os.O_RDWR|unix.O_EXCL, 0)
	if err != nil {
		done()
		return fmt.Errorf("open %s: %w (is it mounted?)", dev.Path(), err)
	}
	err = datadisk.Mkfs(f, dev.Size, datadisk.Format{Label: datadisk.Label, UUID: uuid, Now: time.Now()})
	unix.IoctlSetInt(int(f.Fd()), unix.BLKRRPART, 0) // its old partitions go
	f.Close()
	if err != nil {
		done()
		return fmt.Errorf("format %s: %w", dev.Path(), err)
	}
	rec := datadisk.Record{UUID: datadisk.FormatUUID(uuid[:]), Device: dev.Name, Serial: dev.Serial, Size: dev.Size,
		Phase: datadisk.Moving, Started: time.Now()}
	if err := rec.Write(StateDir); err != nil {
		done()
		return err
	}
	go func() {
		defer done()
		s.move(ctx, rec)
	}()
	return nil
}

// adoptFrom finishes a move a stop interrupted.
func (s *System) adoptFrom(ctx context.Context, rec datadisk.Record) {
	d := s.data
	d.mu.Lock()
	d.adopting = true
	d.mu.Unlock()
	defer func() { d.mu.Lock(); d.adopting = false; d.mu.Unlock() }()
	s.move(ctx, rec)
}

// move fills the disk rec names from the card while the server serves,
// then stops the server for a last pass and switches: the record says
// "switched" (the one write that decides), files.moving becomes files, and
// the server starts again on the disk.
func (s *System) move(ctx context.Context, rec datadisk.Record) {
	fail := func(err error) {
		if s.shuttingDown.Load() {
			// A reboot or power-off cut it: the record stays "moving",
			// and the next boot goes on.
			return
		}
		rec.Phase, rec.Error = datadisk.Failed, err.Error()
		rec.Write(StateDir)
		unmountData()
		s.Log.Error("moving the files to the data disk stopped; the card still holds and serves them", "err", err)
	}
	var dev datadisk.Device
	for {
		var err error
		if dev, err = datadisk.Find(datadisk.Devices(sysBlock, s.notDataDisks()...), rec.UUID); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second): // plugged in later
		}
	}
	// Whatever is at /data (a disk an earlier failure left, a
	// placeholder) comes off: the move writes to this disk only.
	unmountData()
	if err := unix.Mount(dev.Path(), DataMount, "ext4", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOATIME, "errors=remount-ro"); err != nil {
		fail(fmt.Errorf("mount %s: %w", dev.Path(), err))
		return
	}
	if err := os.MkdirAll(dataMoving, 0o700); err != nil {
		fail(err)
		return
	}
	p := &datadisk.Progress{}
	stop := s.tellMove(rec, p)
	s.Log.Info("moving the files to the data disk; the card serves them until every file is checked", "uuid", rec.UUID)
	err := datadisk.Move(ctx, FilesDir, dataMoving, p, time.Time{})
	stop() // its last write lands before the next
	if err != nil {
		fail(err)
		return
	}
	rec.Note(p)
	rec.Write(StateDir)
	if n := p.Damaged.Load(); n > 0 {
		s.Log.Warn("files whose bytes on the card differ from what was uploaded: copied as they are; the card is failing", "files", n)
	}
	s.Log.Info("the files are on the data disk: stopping the server for the last pass", "files", p.Files.Load()+p.Skipped.Load(), "mib", p.Total.Load()>>20)
	result := make(chan error, 1)
	last := func() { result <- s.switchOver(ctx, &rec, dev) }
	if s.Server != nil {
		s.Server.Restart(last)
	} else {
		last()
	}
	if err := <-result; err != nil {
		fail(err)
		return
	}
	s.Log.Info("the files are served from the data disk", "uuid", rec.UUID, "dev", dev.Path())
	fmt.Fprintf(s.Console, "disk: %s\n", rec)
	s.removeCardFiles()
}

// tellMove writes how far the move is into the record every 15 s (for
// the status page) and on the console every 30 s; stop ends it, after its
// last write.
func (s *System) tellMove(rec datadisk.Record, p *datadisk.Progress) (stop func()) {
	quit, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for n := 0; ; n++ {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			r := rec
			r.Note(p)
			r.Write(StateDir)
			if n%2 == 1 {
				fmt.Fprintf(s.Console, "disk: %s\n", r)
			}
		}
	}()
	return func() { close(quit); <-stopped }
}

// switchOver is the move's end, with the server stopped (nothing changes
// on the card now): a last pass, which copies again any file changed since
// the move began whatever its size and date say; the record written as
// switched (from then the disk is the store, whatever happens); and
// files.moving renamed to files.
func (s *System) switchOver(ctx context.Context, rec *datadisk.Record, dev datadisk.Device) error {
	p := &datadisk.Progress{}
	if err := datadisk.Move(ctx, FilesDir, dataMoving, p, rec.Started); err != nil {
		return err
	}
	rec.Note(p)
	rec.Phase, rec.Switched = datadisk.Switched, time.Now()
	if err := rec.Write(StateDir); err != nil {
		return err
	}
	d := s.data
	d.mu.Lock()
	defer d.mu.Unlock()
	d.want, d.dev = rec.UUID, dev.Name
	if err := os.Rename(dataMoving, DataFiles); err != nil {
		d.gone = fmt.Sprintf("the files folder on the data disk: %v", err)
	}
	state.SyncDir(DataMount) // dropped: a cut that undoes the rename is met by mountData at the next start
	return nil
}

// removeCardFiles frees the card of the files the disk now holds: renamed
// aside at once (so nothing could serve them), then removed. Only when the
// disk's files are mounted and served.
func (s *System) removeCardFiles() {
	d := s.data
	d.mu.Lock()
	ok := d.want != datadisk.Card && d.dev != "" && d.gone == ""
	d.mu.Unlock()
	if _, err := os.Stat(DataFiles); !ok || err != nil {
		return
	}
	aside := FilesDir + ".moved"
	if _, err := os.Stat(FilesDir); err == nil {
		s.Log.Info("removing the card's copy of the files")
		if err := os.Rename(FilesDir, aside); err != nil {
			s.Log.Warn("cannot remove the card's old files", "err", err)
			return
		}
		state.SyncDir(PermMount) // dropped: a cut that undoes the rename aside removes it at the next start
	}
	if _, err := os.Stat(aside); err != nil {
		return
	}
	if err := os.RemoveAll(aside); err != nil {
		s.Log.Warn("cannot remove the card's old files", "err", err)
		return
	}
	s.Log.Info("the card's copy of the files is removed: it holds the system and the state only")
}

// diskStatus is the console's `disk` and status line.
func (s *System) diskStatus() string {
	d := s.data
	if d == nil {
		return "not looked for"
	}
	rec, adopted, err := datadisk.ReadRecord(StateDir)
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case err != nil:
		return err.Error()
	case d.gone != "":
		return "no files served: " + d.gone
	case adopted && (rec.Phase != datadisk.Switched || d.want == rec.UUID):
		return rec.String()
	case d.want == datadisk.Card:
		return "the files are on the card"
	}
	return fmt.Sprintf("the files are on %s (/dev/%s)", d.want, d.dev)
}

// blank says whether the device's first MiB is all zeros.
func blank(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 1<<20)
	n, _ := f.ReadAt(b, 0)
	return bytes.Count(b[:n], []byte{0}) == n
}

// diskCommand is the console's `disk` and `disk adopt DEVICE [erase]`.
func (s *System) diskCommand(ctx context.Context, args []string) {
	switch {
	case len(args) == 0:
		fmt.Fprintf(s.Console, "files:   %s\n", s.diskStatus())
		devs := datadisk.Devices(sysBlock, s.notDataDisks()...)
		if len(devs) == 0 {
			fmt.Fprintln(s.Console, "no USB disk is plugged in")
		}
		for _, d := range devs {
			fmt.Fprintf(s.Console, "  %s\n", d)
		}
	case args[0] == "adopt" && s.flashing.Load():
		fmt.Fprintln(s.Console, "disk adopt: an eMMC flash is copying the files: wait for it to end")
	case args[0] == "adopt" && (len(args) == 2 || len(args) == 3 && args[2] == "erase"):
		if err := s.adoptCommand(ctx, args[1], len(args) == 3); err != nil {
			fmt.Fprintf(s.Console, "disk adopt: %v\n", err)
			return
		}
		fmt.Fprintln(s.Console, "disk adopt: formatted; moving the files in the background (`status` shows how far)")
	default:
		fmt.Fprintln(s.Console, "usage: disk, or disk adopt DEVICE [erase]")
	}
}

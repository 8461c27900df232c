// Package boot is bonesync as PID 1 on the board: everything a Linux
// userland does before and around the server, driven by the board's data.
//
// Boot runs these steps, in order:
//
//  1. mount /proc, /sys, /dev, /dev/pts, /run and /tmp;
//  2. identify the board from the device tree (board/*.json);
//  3. load the modules for the hardware present (modalias coldplug) and the
//     board's file-system modules;
//  4. start feeding the hardware watchdog, for as long as the server's own
//     heartbeats come (or it is starting, or being restarted);
//  5. find the disk U-Boot booted from (the card, or the eMMC after `emmc
//     flash`: by the PARTUUID the boot script passes, else the card by its
//     data partition's label): mount its FAT boot partition read-only at
//     /boot (the config file is there) and its ext4 data partition at
//     /perm, growing the data partition to fill the card on first boot;
//  6. find the data disk, if the files live on a USB disk: mount it at
//     /data, or tell the server why there are no files to serve
//     (datadisk_linux.go, which also watches it and moves files onto it);
//  7. read which system slot booted (package update): an update on trial
//     becomes the default once its server is ready; one whose server never
//     is makes the box reboot into the previous version;
//  8. make the USB device port a composite gadget (gadget_linux.go), if
//     the board has one: a network link with its DHCP server, a second
//     console, a read-only start drive; its controller is waited for in
//     the background, never by the boot;
//  9. set the clock to at least the clock floor, then try NTP;
//  10. bring up Ethernet (DHCP, else the config's static address, else
//     link-local), set the hostname and announce it over mDNS (on the
//     USB links too);
//  11. run the server as a child process that notifies its state as it would
//     to systemd, restarting it if it dies or its heartbeats stop, with the
//     LEDs showing booting, benchmarking, serving or error;
//  12. answer the admin prompt on the serial console (and on the USB
//     port's), until reboot or poweroff, which stop the server, sync and unmount first.
package boot

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/board"
)

// Paths on the running box.
const (
	BootMount  = "/boot" // the FAT partition
	PermMount  = "/perm" // the ext4 data partition
	ConfigFile = BootMount + "/bonesync.conf"
	StateDir   = PermMount + "/bonesync"
	FilesDir   = PermMount + "/files"
)

// System is what the steps find and share.
type System struct {
	// Console is where the console's lines go: the serial console and,
	// when the USB device port has one, its serial port (consoles).
	Console  io.Writer
	consoles *consoles
	cmdMu    sync.Mutex // one console command at a time
	usb      *usbPort   // the USB device port's gadget, if made
	// Log is PID 1's logger, on the console after "bonesync: ".
	Log    *slog.Logger
	Board  *board.Board
	Config config.Config
	// Hostname is the name the box won on the network (claimName): the
	// config's, or NAME-2... if another device had it first.
	Hostname string
	LEDs     *LEDs
	Server   *Supervisor
	net      netInfo
	disk     *Disk
	data     *dataDisk // the USB disk the files are on, if any
	started  time.Time
	dog      watchdogState
	timeSet  bool // NTP has set the clock once
	// card is the boot partition's system slots (nil if not booted by
	// the card's boot script); committed once a trial boot's server served.
	card      *update.Card
	trialMu   sync.Mutex
	committed bool
	downMu    sync.Mutex // held from the start of a reboot or power-off
	// shuttingDown is set at the start of a reboot or power-off.
	shuttingDown atomic.Bool
	flashing     atomic.Bool // `emmc flash` runs (emmc_linux.go)
}

// Version is this build's release (main sets it from its -X flag).
var Version = "unknown"

// step is one thing PID 1 does at boot. A step that fails with fatal set
// stops the boot (the error LED lights and the console says why); others
// are reported and the boot goes on.
type step struct {
	name  string
	fatal bool
	run   func(ctx context.Context, s *System) error
}

var steps = []step{
	{"mount /proc /sys /dev /run /tmp", true, mountBase},
	{"identify the board", false, identify},
	{"load kernel modules", false, loadModules},
	{"start the watchdog", false, startWatchdog},
	{"mount the boot and data partitions", true, mountCard},
	{"find the data disk", false, findDataDisk},
	{"read the system slots", false, openSlots},
	{"set up the USB device port", false, startUSB},
	{"set the clock", false, setClock},
	{"bring up the network", false, bringUpNetwork},
}

// Main is PID 1. It never returns: it ends in reboot or poweroff.
func Main() {
	console := &consoles{uart: os.Stdout}
	s := &System{Console: console, consoles: console, Log: sysd.NewConsoleLogger(console, "bonesync: "),
		started: time.Now(), Config: config.Default()}
	s.Hostname = s.Config.Hostname
	// Made first: the watchdog feeder (step 4) asks it whether all is well.
	s.Server = newSupervisor(s)
	ctx := context.Background()
	// u-root's dhclient logs whole packets through the standard logger;
	// the console is for people.
	log.SetOutput(io.Discard)
	fmt.Fprintln(s.Console)
	s.Log.Info("starting as PID 1", "version", Version)
	for _, st := range steps {
		t0 := time.Now()
		err := st.run(ctx, s)
		if err != nil {
			s.Log.Error("boot step failed", "step", st.name, "err", err)
			if st.fatal {
				s.LEDs.Set(LEDError)
				s.Log.Error("cannot go on; the admin prompt still works (Enter)")
				s.prompt(ctx, os.Stdin, nil)
				select {} // the console closed: PID 1 stays
			}
			continue
		}
		if d := time.Since(t0); d > time.Second {
			s.Log.Info("boot step done", "step", st.name, "took", d.Round(100*time.Millisecond))
		}
	}
	s.usb.announce(ctx, s.Hostname) // if the network's step did not (no Ethernet)
	go s.Server.Run(ctx)
	go s.keepDataDisk(ctx)
	s.Log.Info("press Enter on this console for the admin prompt")
	s.prompt(ctx, os.Stdin, nil)
	// The console closed (no serial cable is fine): keep PID 1 alive.
	select {}
}

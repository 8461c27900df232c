package main

import (
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/dnsname"
	"github.com/bonesync/bonesync/appliance/firstlogin"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/update"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/sftpd"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/users"

	"github.com/bonesync/bonesync/appliance/calendars"
	"github.com/bonesync/bonesync/appliance/clock"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/web"
	"github.com/bonesync/bonesync/appliance/webui"
)

// saveClockEvery is how often a running server saves the clock floor: it
// need be about right after a power cut, not to the second, and each save
// is a write to the card. It is saved at shutdown too.
const saveClockEvery = time.Hour

// purgeTrashEvery is how often the trash is purged of what is older than
// trash_days (and, should the disk be short, of its oldest). Writes that
// need room do not wait for it: the trash gives way to them at once.
const purgeTrashEvery = time.Hour

func quickBudget() time.Duration { return provision.QuickBudget }

// setup opens the state directory and the clock floor and reads the config.
func setup(f *flags, log *slog.Logger) (provision.Options, error) {
	cfg := loadConfig(f.config, log)
	if f.hostname != "" {
		if !dnsname.ValidLabel(f.hostname) {
			return provision.Options{}, fmt.Errorf("-hostname %q is not a host name (one DNS label)", f.hostname)
		}
		cfg.Hostname = strings.ToLower(f.hostname)
	}
	dir, err := state.Open(f.state)
	if err != nil {
		return provision.Options{}, err
	}
	clk, err := clock.New(clock.BuildTime(), state.TimeFile{Dir: dir})
	if err != nil {
		log.Warn(err.Error())
	}
	if behind, by := clk.Behind(); behind {
		log.Warn(fmt.Sprintf("clock: the system clock is %v behind the last known time; using %s until it is set",
			by.Round(time.Second), clk.Now().Format(time.RFC3339)))
	}
	return provision.Options{
		State: dir, Config: cfg, Clock: clk, Quick: f.quick,
		Client: loadGenerator, URLs: urls(cfg.Hostname, f), Log: log,
		Status: sysd.Status, Phase: sysd.Phase,
	}, nil
}

func rebench(ctx context.Context, f *flags, stdout, stderr io.Writer) error {
	o, err := setup(f, sysd.NewLogger(stderr))
	if err != nil {
		return err
	}
	o.Rebench = true
	box, err := provision.Ensure(ctx, o)
	if err != nil {
		return err
	}
	o.Clock.Save()
	return box.Report.Console(stdout)
}

func serve(ctx context.Context, f *flags, stdout, stderr io.Writer) error {
	var recent sysd.Recent // the log's last lines, for the admin page
	log := sysd.NewLoggerKeeping(stderr, &recent)
	o, err := setup(f, log)
	if err != nil {
		return err
	}
	box, err := provision.Ensure(ctx, o)
	if err != nil {
		return err
	}
	if box.Benchmarked {
		box.Report.Console(stdout)
	} else {
		io.WriteString(stdout, report.Summary(box.Report))
	}
	if err := o.Clock.Save(); err != nil {
		log.Error(fmt.Sprintf("clock: %v", err))
	}
	limitMemory()
	cur := &current{box: box}

	accounts, err := users.Open(o.State)
	if err != nil {
		return err
	}
	// The card's system slots: updates, and the boot partition that
	// admin_password and FIRST-LOGIN.txt are on.
	card, err := update.Open(f.boot)
	if err != nil && !errors.Is(err, update.ErrNotCard) {
		log.Error(fmt.Sprintf("system slots: %v (updates are off)", err))
	}
	first := &firstlogin.Setup{ConfigPath: f.config, Config: o.Config, Users: accounts, Card: card, Log: log,
		URLs: o.URLs, Change: passwdHint(f)}
	if pw, err := first.Take(); err != nil {
		return err
	} else if pw != "" {
		fmt.Fprintf(stdout, "\nFirst start: user %q, password %s\n", users.Admin, pw)
		if card != nil {
			fmt.Fprintf(stdout, "It is also in %s on the card's boot partition until it is changed; change it with: %s\n", firstlogin.NoteFile, passwdHint(f))
		} else {
			fmt.Fprintf(stdout, "It is shown only this once; change it with: %s\n", passwdHint(f))
		}
	}
	files, err := store.Open(f.files)
	if err != nil {
		return err
	}
	if err := files.RemoveStaleUploads(); err != nil {
		return fmt.Errorf("clean interrupted uploads: %w", err)
	}
	if n, problems := files.NormaliseNames(); n > 0 || len(problems) > 0 {
		log.Info(fmt.Sprintf("files: %d names put in Unicode NFC", n))
		for _, p := range problems {
			log.Warn(fmt.Sprintf("files: %s", p))
		}
	}
	files.SetTrashPolicy(time.Duration(o.Config.TrashDays)*24*time.Hour, int64(o.Config.TrashReserveMB)<<20)
	logins := guard.New(log)
	// Handshakes in flight, TLS and SSH together: enough to keep every core
	// busy, few enough that established sessions still get CPU.
	handshakes := guard.NewLimiter(2*runtime.NumCPU(), 10*time.Second)
	davLocks := locks.New() // WebDAV's locks, which SFTP honours too
	cfg := o.Config
	sftpSrv := &sftpd.Server{
		Users: accounts, Store: files, Guard: logins, Handshakes: handshakes, Locks: davLocks,
		Admission:       guard.NewAdmission("sftp", guard.Limits{PerAddress: cfg.SSHPerAddress, Waiting: cfg.WaitingPerAddress}, log),
		SessionsPerConn: cfg.SSHSessionsPerConn, SessionsPerUser: cfg.SSHSessionsPerUser,
		HostKey:     func() crypto.Signer { return cur.get().SSHKey },
		PostQuantum: func() bool { return cur.get().Choice.SSHPostQuantum },
		Algorithms: sftpd.Overrides{
			KeyExchanges: o.Config.SSHKeyExchanges, Ciphers: o.Config.SSHCiphers, MACs: o.Config.SSHMACs,
		},
		IdleTimeout: o.Config.SSHIdleTimeout,
		Log:         log,
	}
	if err := sftpSrv.Check(); err != nil {
		return fmt.Errorf("SFTP: %w", err)
	}
	dav := &web.DAV{Users: accounts, Store: files, Guard: logins, Locks: davLocks, Log: log}
	pim, err := calendars.Open(files.Dir())
	if err != nil {
		return err
	}
	pim.Limits = calendars.Limits{Object: int64(cfg.CalendarObjectKB) << 10, Objects: cfg.CalendarObjects, Collections: cfg.CalendarsPerUser}
	dav.Calendars = &calendars.Handler{Store: pim, Login: dav.Login, Log: log}

	lns, err := listeners(f)
	if err != nil {
		return err
	}
	_, httpsPort, _ := net.SplitHostPort(lns[0].Addr().String())
	tlsCfg := web.TLSConfig(cur.certificate, cur.postQuantum, o.Clock.Now)
	sys := &web.System{Version: Version, Board: os.Getenv("BONESYNC_BOARD"), Card: card, Started: time.Now()}
	if sys.Board != "" && os.Getenv("NOTIFY_SOCKET") != "" {
		// bonesync's PID 1 supervises this server: it reboots on request.
		sys.Reboot = func(why string) { sysd.RequestReboot(why) }
	}
	if sys.Version == "" {
		sys.Version = version()
	}
	dav.Browser = &webui.UI{DAV: dav, Users: accounts, Store: files, Log: log, System: sys,
		Report: cur.Report, Recent: recent.Lines,
		Measure: func(ctx context.Context, progress io.Writer) error {
			// `bonesync bench`, as at the console, in its own process:
			// this one's memory limit must not change the figures.
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			args := []string{"bench", "-state", f.state, "-config", f.config}
			if f.quick {
				args = append(args, "-quick")
			}
			cmd := exec.CommandContext(ctx, exe, args...)
			cmd.Stdout, cmd.Stderr = progress, progress
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("bonesync bench: %w", err)
			}
			// The new keys and report, at once rather than at the
			// watcher's next look.
			now := o
			now.NoWait = true
			nb, err := provision.Ensure(ctx, now)
			if err == nil {
				cur.set(nb)
			}
			return err
		},
	}
	servers := []*http.Server{
		{Handler: web.HTTPS(cur, dav, sys), ReadHeaderTimeout: 20 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(log.With("listener", "https").Handler(), slog.LevelWarn)},
		{Handler: web.HTTP(cur, httpsPort, dav), ReadHeaderTimeout: 20 * time.Second, IdleTimeout: 2 * time.Minute},
	}
	sctx, stopSFTP := context.WithCancel(ctx)
	defer stopSFTP()
	errc := make(chan error, 3)
	go func() {
		errc <- servers[0].Serve(web.HandshakeListener(sctx, lns[0], tlsCfg, web.Handshakes{
			Slots:     handshakes,
			Admission: guard.NewAdmission("https", guard.Limits{PerAddress: cfg.HTTPSPerAddress, Waiting: cfg.WaitingPerAddress}, log),
			Timeout:   10 * time.Second,
			Log:       log,
		}))
	}()
	go func() {
		// Plain HTTP serves the CA and redirects: waiting_per_address
		// connections per address are plenty.
		per := guard.Limits{PerAddress: cfg.WaitingPerAddress, Waiting: cfg.WaitingPerAddress}
		errc <- servers[1].Serve(web.AdmitListener(lns[1], guard.NewAdmission("http", per, log)))
	}()
	go files.PurgeTrashEvery(sctx, purgeTrashEvery, trashPurged(log)) // until stop cancels sctx
	sftpDone := make(chan struct{})
	go func() { errc <- sftpSrv.Serve(sctx, lns[2]); close(sftpDone) }()
	stop := func() error { stopSFTP(); return shutdown(servers, sftpDone, files, o.Clock, log) }
	log.Info(fmt.Sprintf("serving HTTPS on %s, HTTP on %s, SFTP on %s", lns[0].Addr(), lns[1].Addr(), lns[2].Addr()))
	sysd.Ready()
	sysd.Status(fmt.Sprintf("serving with %s (HTTPS) and %s (SFTP)", box.Choice.TLS.Key, box.Choice.SSH.Key))
	// The heartbeat is monotonic time since start: a clock stepped by NTP
	// must not make a live loop look dead.
	started := time.Now()
	var heartbeat atomic.Int64
	stopWatchdog := sysd.Watchdog(healthy(started, &heartbeat, lns[1].Addr()))
	defer stopWatchdog()
	beat := time.NewTicker(5 * time.Second)
	defer beat.Stop()

	// A new decision from `bonesync bench`, a new address or a certificate
	// near expiry take effect within f.refresh (provision.Watcher).
	watcher := &provision.Watcher{Options: o, Every: f.refresh, Apply: cur.set}
	watcher.Options.Rebench = false
	watcher.Started()
	wctx, cancelWatcher := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { watcher.Run(wctx); close(watched) }()
	stopWatcher := func() { cancelWatcher(); <-watched } // not mid-Ensure at exit
	defer cancelWatcher()
	clockTick := time.NewTicker(saveClockEvery)
	defer clockTick.Stop()
	first.Tidy()
	tidyTick := time.NewTicker(f.refresh)
	defer tidyTick.Stop()
	for {
		select {
		case <-beat.C:
			heartbeat.Store(int64(time.Since(started)))
		case <-ctx.Done():
			sysd.Stopping()
			stopWatcher()
			return stop()
		case err := <-errc:
			stopWatcher()
			stop()
			return fmt.Errorf("server stopped: %w", err)
		case <-clockTick.C:
			if err := o.Clock.Save(); err != nil {
				log.Error(fmt.Sprintf("clock: %v", err))
			}
		case <-tidyTick.C:
			first.Tidy() // FIRST-LOGIN.txt goes once the password changed
		}
	}
}

// trashPurged logs what a purge of the trash removed, or why it could not.
func trashPurged(log *slog.Logger) func(removed int, freed int64, err error) {
	return func(removed int, freed int64, err error) {
		if removed > 0 {
			log.Info(fmt.Sprintf("files: %d items left the trash, %.1f MiB freed", removed, float64(freed)/(1<<20)))
		}
		if err != nil {
			log.Error(fmt.Sprintf("files: purge the trash: %v", err))
		}
	}
}

// memoryLimit is the Go runtime's soft memory limit while serving (unless
// GOMEMLIMIT says otherwise): with the binary's own pages it keeps the
// process under 48 MB with a password being hashed (12 MiB of Argon2id,
// 19 for a hash an earlier version made),
// where the collector's default pace would let garbage from earlier hashes
// pile up first. It is set after the first-boot benchmark, whose figures
// it must not change.
const memoryLimit = 30 << 20

func limitMemory() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	// No transparent huge pages from here on: where the kernel gives them
	// unasked (THP "always", the default of many PC kernels), a fault in
	// a fresh 2 MiB region of the heap, or khugepaged later, makes it one
	// huge page, resident whole, and the heap's few MiB of slack grow. The
	// board's kernel has none; this keeps the .deb's service on a PC as
	// small. Best effort: a kernel before 3.15 does not know the option.
	unix.Prctl(unix.PR_SET_THP_DISABLE, 1, 0, 0, 0)
	debug.FreeOSMemory() // what the benchmark used
}

// listeners are the HTTPS, HTTP and SSH listeners: the sockets systemd
// passed, if it did (bonesync.socket), else opened here.
func listeners(f *flags) ([]net.Listener, error) {
	passed, err := sysd.Listeners()
	if err != nil {
		return nil, err
	}
	if passed == nil {
		return listenAll(f.https, f.http, f.ssh)
	}
	var lns []net.Listener
	for _, role := range []string{"https", "http", "ssh"} {
		ln := passed[role]
		if ln == nil {
			return nil, fmt.Errorf("socket activation passed no %s socket", role)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// healthy is the watchdog's test that the server really serves: its main
// loop has ticked lately (heartbeat: the time since started at its last
// tick) and the plain-HTTP listener answers a request.
func healthy(started time.Time, heartbeat *atomic.Int64, httpAddr net.Addr) func() bool {
	addr := httpAddr.String()
	if tcp, ok := httpAddr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	client := &http.Client{Timeout: 5 * time.Second}
	return func() bool {
		if time.Since(started)-time.Duration(heartbeat.Load()) > 20*time.Second {
			return false
		}
		resp, err := client.Get("http://" + addr + "/ca.crt")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// listenAll opens the listeners in order, closing those already open if one
// fails.
func listenAll(addrs ...string) ([]net.Listener, error) {
	var lns []net.Listener
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("listen on %s: %w", a, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// shutdown stops the HTTP servers, waits up to 5 s for their requests and
// for the SFTP server (sftpDone), and saves the clock. Only if everything
// ended in time is the file store closed cleanly: otherwise a change may
// have been cut between its rename and its folder tags, and the store's
// next start must renew its folder ETags (store.Open).
func shutdown(servers []*http.Server, sftpDone <-chan struct{}, files *store.Store, clk *clock.Floor, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	clean := true
	for _, s := range servers {
		if err := s.Shutdown(ctx); err != nil {
			// Requests still running after 5 s: cut them, so that the stop
			// finishes (and say so; the store is then not marked clean).
			log.Warn(fmt.Sprintf("shutdown: %v; closing the connections still open", err))
			s.Close()
			clean = false
		}
	}
	select {
	case <-sftpDone:
	case <-ctx.Done():
		clean = false
	}
	if clean {
		if err := files.Close(); err != nil {
			log.Error(fmt.Sprintf("files: %v", err))
		}
	} else {
		log.Warn("files: stopped with transfers still running; sync clients will check their folders again after the next start")
	}
	if err := clk.Save(); err != nil {
		log.Error(fmt.Sprintf("clock: %v", err))
	}
	return nil
}

// current holds what is being served, swapped by the refresh loop.
type current struct {
	mu  sync.RWMutex
	box *provision.Box
}

func (c *current) get() *provision.Box {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.box
}

func (c *current) set(b *provision.Box) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.box = b
}

func (c *current) certificate() *tls.Certificate {
	b := c.get()
	return b.Server.TLSCertificate(b.CA)
}

func (c *current) postQuantum() bool      { return c.get().Choice.TLSPostQuantum }
func (c *current) CAPEM() []byte          { return c.get().CA.PEM() }
func (c *current) Report() *report.Report { return c.get().Report }

// passwdHint is the command that changes admin's password, as the person
// reading the console types it: at the board's prompt, or in a shell with
// the state directory this server uses.
func passwdHint(f *flags) string {
	if os.Getenv("BONESYNC_BOARD") != "" {
		return "press Enter on this console, then: user passwd " + users.Admin
	}
	cmd := "bonesync user passwd " + users.Admin
	if def, _ := sysd.Dirs(); f.state != "/var/lib/bonesync" && f.state != def {
		dir := f.state
		if strings.ContainsAny(dir, " '\"$\\") {
			dir = "'" + strings.ReplaceAll(dir, "'", `'\''`) + "'"
		}
		cmd = "bonesync user -state " + dir + " passwd " + users.Admin
	} else if def != "" {
		cmd = "sudo " + cmd
	}
	return cmd
}

// urls lists where the box can be reached from where a person sits: on
// the board (PID 1 says which, BONESYNC_BOARD) by its mDNS name, which only
// the board announces, and its addresses; elsewhere (make run, a Debian
// install) by localhost and the machine's addresses.
func urls(hostname string, f *flags) []string {
	_, port, err := net.SplitHostPort(f.https)
	if err != nil {
		return nil
	}
	suffix := ""
	if port != "443" {
		suffix = ":" + port
	}
	onBoard := os.Getenv("BONESYNC_BOARD") != ""
	name := "localhost"
	if onBoard {
		name = hostname + ".local"
	}
	out := []string{fmt.Sprintf("https://%s%s/", name, suffix)}
	for _, ip := range pki.InterfaceAddrs() {
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			continue
		}
		host := ip.String()
		if ip.To4() == nil {
			host = "[" + host + "]"
		}
		out = append(out, fmt.Sprintf("https://%s%s/", host, suffix))
	}
	out = append(out, fmt.Sprintf("https://%s%s%s/ (WebDAV)", name, suffix, web.DAVPrefix))
	if _, sshPort, err := net.SplitHostPort(f.ssh); err == nil {
		if sshPort == "22" {
			out = append(out, fmt.Sprintf("sftp://%s/", name))
		} else {
			out = append(out, fmt.Sprintf("sftp://%s:%s/", name, sshPort))
		}
	}
	return out
}

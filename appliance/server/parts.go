package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/calendars"
	"github.com/bonesync/bonesync/appliance/files"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/listen"
	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/previewapi"
	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/sftpd"
	"github.com/bonesync/bonesync/appliance/shareapi"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/status"
	"github.com/bonesync/bonesync/appliance/users"
	"github.com/bonesync/bonesync/appliance/webui"
)

// part is one thing the server runs until its context ends: a protocol's
// server or a background job.
type part struct {
	name string
	run  func(ctx context.Context) error
	// serves is set for a part that changes the users' files: the stop
	// is clean only if each such part ends in time.
	serves bool
	// files is set for a job that works on the files (or on what is kept
	// beside them): it does not run while they are away.
	files bool
}

// parts are the protocols on their listeners and the background jobs:
// one list for the server with its files and without them (the data disk
// unplugged, Options.FilesGone), when the front answers every protocol's
// route with why (filesAway), SFTP says why at login and the jobs on the
// files do not run.
func (s *services) parts(lns *listen.Listeners) ([]part, error) {
	sftp, err := s.sftp()
	if err != nil {
		return nil, err
	}
	away := s.o.FilesGone != ""
	if away {
		sftp.Unavailable = "bonesync: " + s.o.FilesGone
	}
	all := []part{
		{"https", s.web(lns).Run, true, false},
		{"sftp", func(ctx context.Context) error { return sftp.Serve(ctx, lns.SSH) }, true, false},
		{"trash", func(ctx context.Context) error {
			s.files.PurgeTrashEvery(ctx, purgeTrashEvery, s.trashPurged)
			return nil
		}, false, true},
		{"previews", func(ctx context.Context) error { s.previews.SweepEvery(ctx, sweepPreviewsEvery); return nil }, false, true},
		{"notices", func(ctx context.Context) error { return s.noticeWatch().Run(ctx) }, false, true},
		{"share-expiry", func(ctx context.Context) error { s.shares.ExpireEvery(ctx, time.Hour); return nil }, false, true},
		{"refresh", func(ctx context.Context) error { s.watcher().Run(ctx); return nil }, false, false},
		{"clock", s.keepClock, false, false},
		{"first-login", s.tidyFirstLogin, false, true},
		{"watchdog", s.watchdog(lns.HTTP.Addr()), false, false},
		{"copies", s.copies, false, true},
	}
	if !away {
		return all, nil
	}
	var parts []part
	for _, p := range all {
		if !p.files {
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// web is the HTTPS and plain-HTTP front with every protocol mounted, or
// while the files are away the CA downloads and filesAway.
func (s *services) web(lns *listen.Listeners) *front.Server {
	if s.o.FilesGone != "" {
		return s.front(lns, front.HTTPS(s.box, strconv.Itoa(listen.PortOf(lns.HTTP)), nil, s.door, filesAway{why: s.o.FilesGone}),
			front.HTTP(s.box, strconv.Itoa(listen.PortOf(lns.HTTPS)), s.door))
	}
	dav, mounts := s.mounts(listen.PortOf(lns.SSH), listen.PortOf(lns.HTTP))
	return s.front(lns, front.HTTPS(s.box, strconv.Itoa(listen.PortOf(lns.HTTP)), s.memory, s.door, mounts...), front.HTTP(s.box, strconv.Itoa(listen.PortOf(lns.HTTPS)), s.door, dav))
}

// mounts are every protocol's routes on the HTTPS port, and the files'
// alone (they answer on the plain-HTTP port too), for the ports of SSH
// and plain HTTP the pages name.
func (s *services) mounts(sshPort, plainPort int) (*files.Handler, []front.Mount) {
	dav := &files.Handler{Store: s.files, Quotas: s.room(), Favorites: s.favs, Locks: s.locks, Memory: s.memory, Log: s.log,
		FolderPage: webui.FolderURL, Emails: s.accounts, Shares: s.shares, Links: s.shares, LinkDoor: s.door,
		Capabilities: merge(notices.Capabilities, shareapi.Capabilities)}
	sys := system{s, time.Now()}
	ms := []front.Mount{
		dav,
		&previewapi.Handler{Maker: s.previews, Log: s.log},
		&notices.Handler{Board: s.notices, Log: s.log},
		&shareapi.API{Book: s.shares, Store: s.files, Users: s.accounts, Log: s.log},
		&calendars.Handler{Store: s.pim, Emails: s.accounts, Log: s.log},
	}
	ms = append(ms, s.rooms(sys, dav, sshPort)...)
	return dav, append(ms, &status.Handler{Door: s.door, System: sys, Report: s.box.Report, PlainPort: plainPort, Log: s.log, Audit: s.audit, Probes: s.probes})
}

// rooms are the web pages, a handler per group of pages, each given the
// parts its pages use.
func (s *services) rooms(sys admin.System, dav *files.Handler, sshPort int) []front.Mount {
	ui := &webui.Common{Log: s.log, Notices: s.notices, Audit: s.audit}
	return []front.Mount{ui,
		&webui.Login{Common: ui, WaysIn: s.door, Apps: s.accounts, Passkeys: s.door.Passkeys(), OnBoard: sys.Board() != ""},
		&webui.Files{Common: ui, Store: s.files, Users: s.accounts, Search: dav, DAV: files.Prefix, Thumbs: true},
		&webui.Photos{Common: ui, Store: s.files, Users: s.accounts, Previews: s.previews},
		&webui.Sharing{Common: ui, Store: s.files, Users: s.accounts, Shares: s.shares, Collections: s.collectionNames},
		&webui.Account{Common: ui, WaysIn: s.door, Users: s.accounts, Passkeys: s.door.Passkeys(), Keys: users.PasskeysOf(s.accounts),
			Report: s.box.Report, SFTPPort: sshPort},
		&webui.Public{Common: ui, WaysIn: s.door, Shares: s.shares, Store: s.files, Previews: s.previews},
		&webui.Admin{Common: ui, Sessions: s.door.Sessions(), Users: s.accounts, Store: s.files, System: sys,
			Report: s.box.Report, Recent: s.recent.Lines, Measure: s.measure, Accounts: s.acct, Calendars: s.pim},
	}
}

// front is the web front on the ports, with the handlers of each.
func (s *services) front(lns *listen.Listeners, https, plain http.Handler) *front.Server {
	cfg := s.cfg
	return &front.Server{
		HTTPS: lns.HTTPS, TLS: front.TLSConfig(s.box.certificates, s.box.postQuantum, s.prov.Clock.Now),
		Handshakes: front.Handshakes{
			Slots:     s.handshakes,
			Admission: guard.NewAdmission("https", guard.Limits{PerAddress: cfg.HTTPSPerAddress, Waiting: cfg.WaitingPerAddress}, s.log).Trust(s.door.Known).Bans(s.door.Banned).Probes(s.probes),
			Timeout:   10 * time.Second,
			Log:       s.log,
		},
		Handler: https,
		// Plain HTTP serves the CA and redirects: waiting_per_address
		// connections per address are plenty.
		HTTP: lns.HTTP, PlainLimits: guard.Limits{PerAddress: cfg.WaitingPerAddress, Waiting: cfg.WaitingPerAddress},
		Plain: plain,
		Log:   s.log,
	}
}

// sftp is the SFTP server, its algorithm lists checked before it starts.
func (s *services) sftp() (*sftpd.Server, error) {
	cfg := s.cfg
	srv := &sftpd.Server{
		Door: s.door, Quotas: s.room(), Store: s.files, Locks: s.locks, Handshakes: s.handshakes,
		Admission:       guard.NewAdmission("sftp", guard.Limits{PerAddress: cfg.SSHPerAddress, Waiting: cfg.WaitingPerAddress}, s.log).Trust(s.door.Known).Bans(s.door.Banned).Probes(s.probes),
		SessionsPerConn: cfg.SSHSessionsPerConn, SessionsPerUser: cfg.SSHSessionsPerUser,
		HostKeys:    s.box.hostKeys,
		PostQuantum: func() bool { return s.box.get().Choice.SSHPostQuantum },
		Algorithms:  sftpd.Overrides{KeyExchanges: cfg.SSHKeyExchanges, Ciphers: cfg.SSHCiphers, MACs: cfg.SSHMACs},
		IdleTimeout: cfg.SSHIdleTimeout,
		Log:         s.log,
	}
	if err := srv.Check(); err != nil {
		return nil, fmt.Errorf("SFTP: %w", err)
	}
	return srv, nil
}

// measure is the admin page's "measure again": `bonesync bench`, as at the
// console, in its own process (this one's memory limit must not change the
// figures), then the new keys and report at once rather than at the
// watcher's next look.
func (s *services) measure(ctx context.Context, progress io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"bench", "-state", s.o.State, "-config", s.o.Config}
	if s.o.Quick {
		args = append(args, "-quick")
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout, cmd.Stderr = progress, progress
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bonesync bench: %w", err)
	}
	now := s.prov
	now.NoWait, now.URLs = true, nil
	b, err := provision.Ensure(ctx, now)
	if err == nil {
		s.box.set(b)
	}
	return err
}

// watcher applies a new decision from `bonesync bench`, a new address or
// a certificate near expiry within Refresh (provision.Watcher).
func (s *services) watcher() *provision.Watcher {
	w := &provision.Watcher{Options: s.prov, Every: s.o.Refresh, Apply: s.box.set}
	// A refresh keeps the URLs on disk: the server shows its own
	// (current.Report), and two processes on one state directory do not
	// rewrite the report in turn with theirs.
	w.Options.Rebench, w.Options.URLs = false, nil
	w.Started()
	return w
}

// watchdogAddr is where the watchdog's health check asks: the plain-HTTP
// listener, on loopback when it listens on every address.
func watchdogAddr(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return a.String()
}

// merge is the parts' blocks of the OCS capabilities, together.
func merge(blocks ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, b := range blocks {
		for k, v := range b {
			out[k] = v
		}
	}
	return out
}

// collectionNames are a user's calendars and address books, by name: what
// the sharing page offers to share.
func (s *services) collectionNames(user string) (cals, books []string) {
	for kind, out := range map[calendars.Kind]*[]string{calendars.Calendars: &cals, calendars.AddressBooks: &books} {
		list, _ := s.pim.Collections(kind, user)
		for _, c := range list {
			*out = append(*out, c.Name)
		}
	}
	return cals, books
}

// calendarShares is the book of shares as the calendars ask it.
type calendarShares struct{ book *shares.Book }

func (c calendarShares) Granted(user string, k calendars.Kind) []calendars.Grant {
	item := shares.ItemCalendar
	if k == calendars.AddressBooks {
		item = shares.ItemAddressBook
	}
	var out []calendars.Grant
	for _, s := range c.book.Collections(user, item) {
		out = append(out, calendars.Grant{ID: strconv.Itoa(s.ID), Owner: s.Owner, Name: s.Path, Write: rights.Set(s.Perm)&rights.Update != 0})
	}
	return out
}

func (c calendarShares) Leave(user, id string) error {
	n, err := strconv.Atoi(id)
	if err != nil {
		return err
	}
	return c.book.Remove(user, n)
}

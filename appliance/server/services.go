package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bonesync/bonesync/appliance/accounts"
	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/audit"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/calendars"
	"github.com/bonesync/bonesync/appliance/clock"
	"github.com/bonesync/bonesync/appliance/config"
	"github.com/bonesync/bonesync/appliance/dnsname"
	"github.com/bonesync/bonesync/appliance/favorites"
	"github.com/bonesync/bonesync/appliance/firstlogin"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/health"
	"github.com/bonesync/bonesync/appliance/listen"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/shares"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/update"
	"github.com/bonesync/bonesync/appliance/users"
	"github.com/bonesync/bonesync/appliance/webui"
)

// services are what the protocols share, each built once.
type services struct {
	o      Options
	log    *slog.Logger
	recent *sysd.Recent
	prov   provision.Options
	cfg    config.Config
	box    *current

	// memory is the box's budget: every costly operation draws from it
	// (package budget)
	memory   *budget.Budget
	accounts *users.DB
	// acct deletes an account and ends everything keyed by it
	acct     *accounts.Service
	door     *auth.Door
	audit    *audit.Log
	files    *store.Store
	previews *preview.Maker
	favs     *favorites.Set
	notices  *notices.Board
	shares   *shares.Book
	pim      *calendars.Store
	locks    *locks.Table // WebDAV's locks, which SFTP honours too
	// handshakes caps the TLS and SSH handshakes in flight together:
	// enough to keep every core busy, few enough that established
	// sessions still get CPU.
	handshakes *guard.Limiter
	// probes are the owner's probes let past the per-address limits of
	// both ports (bonesync probe -token)
	probes   *guard.Probes
	card     *update.Card // nil off a card
	first    *firstlogin.Setup
	copyPlan *admin.CopyPlan                 // the copy settings in force
	copyCtx  atomic.Pointer[context.Context] // the copies part's, once it runs: the admin page's runs end with it
	health   *health.Log                     // the disks' writes and errors, sampled hourly
}

// Provisioning reads the config and opens the state directory and the
// clock floor: what provision.Ensure works from.
func Provisioning(o Options, log *slog.Logger) (provision.Options, error) {
	cfg, probs := config.Load(o.Config)
	for _, p := range probs {
		log.Warn("config problem", "at", fmt.Sprintf("%s:%d", p.File, p.Line), "problem", p.Msg)
	}
	if o.Hostname != "" {
		if !dnsname.ValidLabel(o.Hostname) {
			return provision.Options{}, fmt.Errorf("-hostname %q is not a host name (one DNS label)", o.Hostname)
		}
		cfg.Hostname = strings.ToLower(o.Hostname)
	}
	dir, err := state.Open(o.State)
	if err != nil {
		return provision.Options{}, err
	}
	clk, err := clock.New(clock.BuildTime(), state.TimeFile{Dir: dir})
	if err != nil {
		log.Warn("clock floor", "err", err)
	}
	if behind, by := clk.Behind(); behind {
		log.Warn("clock: the system clock is behind the last known time; using the floor until it is set",
			"behind", by.Round(time.Second), "floor", clk.Now().Format(time.RFC3339))
	}
	return provision.Options{
		State: dir, Config: cfg, Clock: clk, Quick: o.Quick,
		Client: o.LoadGenerator, Log: log,
		Status: sysd.Status, Phase: sysd.Phase,
	}, nil
}

// open builds the shared services.
func open(o Options, p provision.Options, box *provision.Box, lns *listen.Listeners, log *slog.Logger, recent *sysd.Recent) (*services, error) {
	s := &services{o: o, log: log, recent: recent, prov: p, cfg: p.Config, box: newCurrent(box, p.URLs),
		locks: locks.New(), handshakes: guard.NewLimiter(2*runtime.NumCPU(), 10*time.Second), probes: guard.NewProbes(),
		health: &health.Log{Dir: health.Dir(o.State)}}
	s.copyPlan = admin.NewCopyPlan(p.Config, o.State, log)
	var err error
	if s.accounts, err = users.Open(p.State); err != nil {
		return nil, err
	}
	s.memory = budget.New(budget.Admission, budget.Options{})
	s.door = auth.New(s.accounts, log)
	s.door.DrawFrom(s.memory)
	s.door.LoginPage = webui.LoginPage
	s.door.HomePage = webui.FilesPrefix + "/"
	// The owner's record of logins and changes: without it the box still
	// serves (the log says why).
	if s.audit, err = audit.Open(audit.Dir(o.State)); err != nil {
		log.Error("no audit log", "err", err)
	}
	s.door.Audit(s.audit)
	// The card's system slots: updates, and the boot partition that
	// admin_password and FIRST-LOGIN.txt are on.
	if s.card, err = update.Open(o.Boot, o.State); err != nil && !errors.Is(err, update.ErrNotCard) {
		log.Error("system slots unreadable: updates are off", "err", err)
	}
	s.first = &firstlogin.Setup{ConfigPath: o.Config, Config: p.Config, Users: s.accounts, Log: log,
		URLs: p.URLs, Change: passwdHint(o)}
	if s.card != nil {
		s.first.Card = s.card
	}
	if err := s.firstLogin(); err != nil {
		return nil, err
	}
	// The store last: once open, it is marked running until it is closed.
	if s.files, err = openStore(o.Files, p.Config, log); err != nil {
		return nil, err
	}
	if s.pim, err = calendars.Open(s.files.Dir()); err != nil {
		s.files.Close()
		return nil, err
	}
	s.previews = &preview.Maker{Store: s.files, Memory: s.memory, Log: log}
	favDir, err := s.files.OwnDir("favorites")
	if err != nil {
		s.files.Close()
		return nil, err
	}
	s.favs = favorites.Open(favDir)
	noticeDir, err := s.files.OwnDir("notices")
	if err != nil {
		s.files.Close()
		return nil, err
	}
	s.notices = notices.Open(noticeDir, log)
	shareDir, err := s.files.OwnDir("shares")
	if err != nil {
		s.files.Close()
		return nil, err
	}
	if s.shares, err = shares.Open(shareDir, s.files, s.accounts, log); err != nil {
		s.files.Close()
		return nil, err
	}
	s.shares.Told = s.toldShare
	s.shares.Audit = s.audit
	s.shares.Ended = func(sh shares.Share) { s.notices.Clear(sh.With, "share", strconv.Itoa(sh.ID)) }
	s.files.SetMounts(s.shares, s.room().Quota)
	s.pim.Sharing = calendarShares{s.shares}
	s.pim.Room = s.room().ForCalendars
	s.shares.CollectionExists = func(owner, item, name string) bool {
		k := calendars.Calendars
		if item == shares.ItemAddressBook {
			k = calendars.AddressBooks
		}
		_, err := s.pim.Collection(k, owner, name)
		return err == nil
	}
	s.acct = &accounts.Service{Users: s.accounts, Log: log,
		Parts: map[string]accounts.Part{"shares": s.shares, "notices": s.notices}}
	s.accounts.OnGone(s.acct.Gone) // `bonesync user del` beside the server
	if err := s.acct.Reconcile(); err != nil {
		log.Warn("accounts deleted while no server ran: not all they had ended", "err", err)
	}
	cfg := p.Config
	s.pim.Limits = calendars.Limits{Object: int64(cfg.CalendarObjectKB) << 10, Objects: cfg.CalendarObjects, Collections: cfg.CalendarsPerUser}
	s.pim.Memory = s.memory
	return s, nil
}

// openStore opens the users' files, tidied after an unclean stop.
func openStore(dir string, cfg config.Config, log *slog.Logger) (*store.Store, error) {
	files, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := files.RemoveStaleUploads(); err != nil {
		return nil, fmt.Errorf("clean interrupted uploads: %w", err)
	}
	if n, problems := files.NormaliseNames(); n > 0 || len(problems) > 0 {
		log.Info("files: names put in Unicode NFC", "renamed", n)
		for _, p := range problems {
			log.Warn("files: a name not put in NFC", "problem", p)
		}
	}
	files.SetTrashPolicy(time.Duration(cfg.TrashDays)*24*time.Hour, int64(cfg.TrashReserveMB)<<20)
	return files, nil
}

// firstLogin takes admin_password and admin_ssh_key from the config, or
// makes the first start's password and shows it once.
func (s *services) firstLogin() error {
	pw, err := s.first.Take()
	if err != nil || pw == "" {
		return err
	}
	out := s.o.Stdout
	fmt.Fprintf(out, "\nFirst start: user %q, password %s\n", users.Admin, pw)
	if s.card != nil {
		fmt.Fprintf(out, "It is also in %s on the card's boot partition until it is changed; change it with: %s\n", firstlogin.NoteFile, passwdHint(s.o))
	} else {
		fmt.Fprintf(out, "It is shown only this once; change it with: %s\n", passwdHint(s.o))
	}
	return nil
}

// stop ends the serving: the store is closed cleanly only if every part
// ended in time (else a change may have been cut between its rename and
// its folder tags, and the store's next start renews its folder ETags),
// and the clock floor is saved.
func (s *services) stop(clean bool, err error) error {
	switch {
	case s.files == nil: // served without them
	case clean:
		if cerr := s.files.Close(); cerr != nil {
			s.log.Error("files: close the store", "err", cerr)
		}
	default:
		s.log.Warn("files: stopped with transfers still running; sync clients will check their folders again after the next start")
	}
	if err != nil {
		return fmt.Errorf("server stopped: %w", err)
	}
	return nil
}

// close saves the clock floor, whatever ended the serving.
func (s *services) close() { saveClock(s.prov.Clock, s.log) }

func saveClock(c *clock.Floor, log *slog.Logger) {
	if err := c.Save(); err != nil {
		log.Error("clock: save the floor", "err", err)
	}
}

// onBoardWithPID1 says whether bonesync's PID 1 supervises this server: it
// reboots the board on request.
func onBoardWithPID1(o Options) bool { return o.Board != "" && os.Getenv("NOTIFY_SOCKET") != "" }

// room is the accounts' one quota for their files and calendars.
func (s *services) room() accounts.Room {
	r := accounts.Room{Limits: s.accounts, Files: s.files}
	if s.pim != nil {
		r.Calendars = s.pim
	}
	return r
}

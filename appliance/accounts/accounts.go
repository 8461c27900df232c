// Package accounts owns the operations on an account that span the box's
// parts. Deleting a user, from the admin page, the command line or the
// console (which runs the command line), goes through Service.Delete,
// which removes the account (its password, app passwords, keys and
// two-factor secret go with it) and tells every part that keeps something
// keyed by the account to end it: its shares and links (calendar and
// address book shares among them), its notices. Sessions and the apps'
// login flows hold the account's identity (users.DB.Since, in its Stamp)
// and die with it.
//
// A deletion made by another process (`bonesync user del` beside the
// running server) reaches the server's parts through users.DB.OnGone,
// wired to Gone; one made while no server ran, through Reconcile at the
// next start. An account made again with the same name inherits nothing:
// what was keyed by the old one carries the old one's identity.
package accounts

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/bonesync/bonesync/appliance/users"
)

// Part is a part of the box that keeps something keyed by an account.
type Part interface {
	// UserGone ends what name's deleted account had here.
	UserGone(name string) error
	// Reconcile ends what accounts that no longer exist had here, at
	// start (a deletion no server saw).
	Reconcile(exists func(name string) bool) error
}

// Service is the one owner of deleting an account.
type Service struct {
	Users *users.DB
	// Parts are what keep something keyed by an account, by name for the
	// errors; none where no server runs (the command line: the server
	// sees the deletion, or its next start does).
	Parts map[string]Part
	Log   *slog.Logger
}

// ErrAdmin refuses deleting the admin account.
var ErrAdmin = errors.New("the admin account cannot be deleted")

// Delete removes name's account and ends everything keyed by it. An
// error means the account is still there; a part that could not end what
// it had is logged by Gone (it holds nothing live: what it kept carries
// the deleted account's identity, and the next start ends it).
func (s *Service) Delete(name string) error {
	if name == users.Admin {
		return ErrAdmin
	}
	if err := s.Users.Delete(name); err != nil {
		return err
	}
	s.Gone(name)
	return nil
}

// Gone tells every part that name's account was deleted, and logs what
// they said.
func (s *Service) Gone(name string) {
	var errs []error
	for part, p := range s.Parts {
		if err := p.UserGone(name); err != nil {
			errs = append(errs, fmt.Errorf("%s of %s: %w", part, name, err))
		}
	}
	if s.Log == nil {
		return
	}
	if err := errors.Join(errs...); err != nil {
		s.Log.Error("account deleted, not all it had ended", "user", name, "err", err)
	} else {
		s.Log.Info("account deleted: what it had here ended", "user", name)
	}
}

// Reconcile ends, in every part, what accounts that no longer exist had:
// run at start, after a deletion made while no server ran. A users file
// that cannot be read ends nothing.
func (s *Service) Reconcile() error {
	list, err := s.Users.List()
	if err != nil {
		return fmt.Errorf("accounts: %w", err)
	}
	names := map[string]bool{}
	for _, in := range list {
		names[in.Name] = true
	}
	exists := func(name string) bool { return names[name] }
	var errs []error
	for part, p := range s.Parts {
		if err := p.Reconcile(exists); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", part, err))
		}
	}
	return errors.Join(errs...)
}

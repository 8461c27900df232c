package calendars

// Calendars and address books shared between users (package shares keeps
// who shares what: Sharing). A collection shared with a user appears in
// their home as NAME_shared_by_OWNER, as Nextcloud names it, read-only
// (current-user-privilege-set says read) or read and write; what is
// read or written there is the owner's collection. The recipient deletes
// it to leave the share.

import (
	"errors"
	"net/http"

	"github.com/emersion/go-webdav"
)

// Grant is a collection another user shares with one.
type Grant struct {
	ID    string // the share's, to leave it
	Owner string
	Name  string // the owner's name for it
	Write bool
}

// Alias is the grant's name in the recipient's home.
func (g Grant) Alias() string { return g.Name + "_shared_by_" + g.Owner }

// Sharing says what is shared with a user.
type Sharing interface {
	// Granted are the collections of kind k shared with user.
	Granted(user string, k Kind) []Grant
	// Leave ends the share id for user (they deleted it from their home).
	Leave(user, id string) error
}

var errReadOnly = webdav.NewHTTPError(http.StatusForbidden, errors.New("this collection is shared with you to read only"))

// grant is what the collection t names in the user's home is, if shared.
func (s *Store) grant(t target) (Grant, bool) {
	if s.Sharing == nil || t.coll == "" {
		return Grant{}, false
	}
	for _, g := range s.Sharing.Granted(t.user, t.kind) {
		if g.Alias() == t.coll {
			return g, true
		}
	}
	return Grant{}, false
}

// kept fills in where t's collection is kept: the user's own, or the
// owner's of a share.
func (s *Store) kept(t target) target {
	t.owner, t.ocoll = t.user, t.coll
	if g, ok := s.grant(t); ok {
		t.owner, t.ocoll, t.readOnly, t.shareID = g.Owner, g.Name, !g.Write, g.ID
	}
	return t
}

// shared are the collections of kind k shared with user, as they are
// seen in their home: named by alias.
func (s *Store) shared(user string, k Kind) []Collection {
	if s.Sharing == nil {
		return nil
	}
	var out []Collection
	for _, g := range s.Sharing.Granted(user, k) {
		c, err := s.Collection(k, g.Owner, g.Name)
		if err != nil {
			continue
		}
		c.User, c.Name = user, g.Alias()
		if c.DisplayName == "" {
			c.DisplayName = g.Name
		}
		c.DisplayName += " (" + g.Owner + ")"
		c.readOnly, c.owner = !g.Write, g.Owner
		out = append(out, *c)
	}
	return out
}

// collectionAt is the collection t names, as the user sees it: a share's
// is its owner's, under the user's name for it.
func (s *Store) collectionAt(t target) (*Collection, error) {
	c, err := s.Collection(t.kind, t.owner, t.ocoll)
	if err != nil {
		return nil, err
	}
	if t.shareID != "" {
		c.owner, c.readOnly = t.owner, t.readOnly
		c.User, c.Name = t.user, t.coll
	}
	return c, nil
}

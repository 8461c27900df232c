// Package notices keeps what the box has to tell its users: a quota or
// the disk nearly full, an update that failed or was rolled back, a share
// given to them. The Nextcloud apps show them under their bell (the OCS
// notifications API, served here), and the web pages at their top. A
// notice is about something (its kind and key): posted again while that
// lasts, it is not repeated; dismissed, it stays dismissed until the thing
// is over (Clear) and happens again.
//
// Each user's notices are one small file, files/.bonesync/notices/USER.json,
// written whole and synced.
package notices

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/ocs"
	"github.com/bonesync/bonesync/appliance/state"
)

// maxKept bounds a user's notices: the oldest go first.
const maxKept = 100

// Notice is one notice.
type Notice struct {
	ID      int       `json:"id"`
	Kind    string    `json:"kind"` // what it is about: "quota", "disk", "update", "share"
	Key     string    `json:"key"`  // which one of those
	Time    time.Time `json:"time"`
	Subject string    `json:"subject"`
	Message string    `json:"message,omitempty"`
	Link    string    `json:"link,omitempty"` // a page of the box's, from its root
}

// file is a user's notices as kept.
type file struct {
	Next      int      `json:"next"`
	Notices   []Notice `json:"notices"`
	Dismissed []string `json:"dismissed,omitempty"` // kind/key dismissed while it lasts
}

// Board is the users' notices.
type Board struct {
	dir string
	log *slog.Logger
	now func() time.Time

	mu     sync.Mutex
	byUser map[string]*file
}

// Open returns the notices kept in dir.
func Open(dir string, log *slog.Logger) *Board {
	return &Board{dir: dir, log: log, now: time.Now, byUser: map[string]*file{}}
}

func (b *Board) path(user string) (string, error) {
	if user == "" || strings.ContainsAny(user, "/\\\x00") || strings.HasPrefix(user, ".") {
		return "", fmt.Errorf("bad user name %q", user)
	}
	return filepath.Join(b.dir, user+".json"), nil
}

// load reads user's notices once; the caller holds b.mu.
func (b *Board) load(user string) (*file, error) {
	if f, ok := b.byUser[user]; ok {
		return f, nil
	}
	name, err := b.path(user)
	if err != nil {
		return nil, err
	}
	f := &file{Next: 1}
	data, err := os.ReadFile(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("notices of %s: %w", user, err)
	default:
		if err := json.Unmarshal(data, f); err != nil {
			// Notices are not worth refusing to serve over: started anew,
			// and said.
			b.log.Warn("notices damaged: starting anew", "user", user, "err", err)
			f = &file{Next: 1}
		}
	}
	b.byUser[user] = f
	return f, nil
}

func (b *Board) save(user string, f *file) error {
	name, err := b.path(user)
	if err != nil {
		return err
	}
	return state.WriteJSON(name, f, 0o600)
}

func about(kind, key string) string { return kind + "/" + key }

// Post tells user of kind/key, unless a notice of it is there already or
// was dismissed while it lasts.
func (b *Board) Post(user, kind, key, subject, message, link string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, err := b.load(user)
	if err != nil {
		return err
	}
	k := about(kind, key)
	if slices.Contains(f.Dismissed, k) || slices.ContainsFunc(f.Notices, func(n Notice) bool { return n.Kind == kind && n.Key == key }) {
		return nil
	}
	f.Notices = append(f.Notices, Notice{ID: f.Next, Kind: kind, Key: key, Time: b.now().UTC(), Subject: subject, Message: message, Link: link})
	f.Next++
	if len(f.Notices) > maxKept {
		f.Notices = f.Notices[len(f.Notices)-maxKept:]
	}
	return b.save(user, f)
}

// Clear says kind/key is over: its notice goes, and it may be told again.
func (b *Board) Clear(user, kind, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, err := b.load(user)
	if err != nil {
		return err
	}
	k := about(kind, key)
	n := len(f.Notices) + len(f.Dismissed)
	f.Notices = slices.DeleteFunc(f.Notices, func(n Notice) bool { return n.Kind == kind && n.Key == key })
	f.Dismissed = slices.DeleteFunc(f.Dismissed, func(d string) bool { return d == k })
	if len(f.Notices)+len(f.Dismissed) == n {
		return nil
	}
	return b.save(user, f)
}

// List is user's notices, newest first.
func (b *Board) List(user string) ([]Notice, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, err := b.load(user)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(f.Notices)
	slices.Reverse(out)
	return out, nil
}

// Dismiss removes the notice id (0: all of them); what they were about is
// not told again while it lasts.
func (b *Board) Dismiss(user string, id int) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, err := b.load(user)
	if err != nil {
		return false, err
	}
	found := false
	f.Notices = slices.DeleteFunc(f.Notices, func(n Notice) bool {
		if id != 0 && n.ID != id {
			return false
		}
		found = true
		if k := about(n.Kind, n.Key); !slices.Contains(f.Dismissed, k) {
			f.Dismissed = append(f.Dismissed, k)
		}
		return true
	})
	if !found {
		return id == 0, nil
	}
	return true, b.save(user, f)
}

// Capabilities are what the notifications API says of itself.
var Capabilities = map[string]any{"notifications": map[string]any{"ocs-endpoints": []string{"list", "get", "delete", "delete-all"}}}

// Handler serves the notifications API of Nextcloud's notifications app,
// as its apps call it.
type Handler struct {
	Board *Board
	Log   *slog.Logger
}

const api = "/ocs/v2.php/apps/notifications/api/v2/notifications"

// Routes mounts the list, one notice, and their dismissal.
func (h *Handler) Routes(rs *front.Routes) {
	rs.Handle(auth.User, "GET "+api, h.list)
	rs.Handle(auth.User, "DELETE "+api, h.dismiss)
	rs.Handle(auth.User, "GET "+api+"/{id}", h.one)
	rs.Handle(auth.User, "DELETE "+api+"/{id}", h.dismiss)
}

// nc is a notice as the notifications API says it.
func nc(user string, n Notice, r *http.Request) map[string]any {
	link := ""
	if n.Link != "" {
		link = "https://" + r.Host + n.Link
	}
	return map[string]any{
		"notification_id": n.ID, "app": "bonesync", "user": user,
		"datetime":    n.Time.UTC().Format("2006-01-02T15:04:05-07:00"),
		"object_type": n.Kind, "object_id": n.Key,
		"subject": n.Subject, "message": n.Message, "link": link, "icon": "",
		"subjectRich": "", "subjectRichParameters": map[string]any{},
		"messageRich": "", "messageRichParameters": map[string]any{},
		"actions": []any{}, "shouldNotify": true,
	}
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	all, err := h.Board.List(user)
	if err != nil {
		h.Log.Error("cannot read the notices", "user", user, "err", err)
		ocs.Error(w, r, http.StatusInternalServerError, "cannot read your notifications")
		return
	}
	out := make([]map[string]any, 0, len(all))
	for _, n := range all {
		out = append(out, nc(user, n, r))
	}
	ocs.Write(w, r, out)
}

func (h *Handler) one(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	id, _ := strconv.Atoi(r.PathValue("id"))
	all, err := h.Board.List(user)
	if err != nil {
		ocs.Error(w, r, http.StatusInternalServerError, "cannot read your notifications")
		return
	}
	for _, n := range all {
		if n.ID == id {
			ocs.Write(w, r, nc(user, n, r))
			return
		}
	}
	ocs.Error(w, r, http.StatusNotFound, "Notification not found")
}

func (h *Handler) dismiss(w http.ResponseWriter, r *http.Request, who auth.Caller) {
	user := who.User
	id := 0
	if s := r.PathValue("id"); s != "" {
		var err error
		if id, err = strconv.Atoi(s); err != nil || id <= 0 {
			ocs.Error(w, r, http.StatusNotFound, "Notification not found")
			return
		}
	}
	found, err := h.Board.Dismiss(user, id)
	switch {
	case err != nil:
		h.Log.Error("cannot dismiss a notice", "user", user, "err", err)
		ocs.Error(w, r, http.StatusInternalServerError, "cannot dismiss it")
	case !found:
		ocs.Error(w, r, http.StatusNotFound, "Notification not found")
	default:
		ocs.Write(w, r, []any{})
	}
}

// UserGone forgets the notices of name's deleted account (accounts.Part).
func (b *Board) UserGone(name string) error {
	p, err := b.path(name)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.byUser, name)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("notices of %s: %w", name, err)
	}
	return nil
}

// Reconcile forgets the notices of accounts that no longer exist
// (accounts.Part), at start.
func (b *Board) Reconcile(exists func(name string) bool) error {
	entries, err := os.ReadDir(b.dir)
	if err != nil {
		return fmt.Errorf("notices: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if ok && !strings.HasPrefix(name, ".") && !exists(name) {
			errs = append(errs, b.UserGone(name))
		}
	}
	return errors.Join(errs...)
}

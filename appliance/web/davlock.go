package web

// LOCK and UNLOCK, on the box's lock table (package locks) rather than
// x/net/webdav's, which has no shared locks and which SFTP could not see.
// x/net/webdav is given a lock system that confirms everything (noLocks):
// every request that changes something has had its If header and locks
// checked in DAV.conditions before x/net/webdav sees it.

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/webdav"

	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/store"
)

func (d *DAV) locks() *locks.Table {
	d.locksOnce.Do(func() {
		if d.Locks == nil {
			d.Locks = locks.New()
		}
	})
	return d.Locks
}

// noLocks is the webdav.LockSystem x/net/webdav is given: the checks were
// made before it was called, and LOCK and UNLOCK never reach it.
type noLocks struct{}

func (noLocks) Confirm(time.Time, string, string, ...webdav.Condition) (func(), error) {
	return func() {}, nil
}

// Create and Unlock are called for the brief lock x/net/webdav takes around
// a request without an If header.
func (noLocks) Create(time.Time, webdav.LockDetails) (string, error) { return "bonesync:unused", nil }
func (noLocks) Refresh(time.Time, string, time.Duration) (webdav.LockDetails, error) {
	return webdav.LockDetails{}, webdav.ErrNoSuchLock
}
func (noLocks) Unlock(time.Time, string) error { return nil }

// lockInfo is a LOCK request's body.
type lockInfo struct {
	XMLName   xml.Name  `xml:"lockinfo"`
	Exclusive *struct{} `xml:"lockscope>exclusive"`
	Shared    *struct{} `xml:"lockscope>shared"`
	Write     *struct{} `xml:"locktype>write"`
	Owner     *struct {
		Inner string `xml:",innerxml"`
	} `xml:"owner"`
}

// lock answers LOCK: a new lock (exclusive or shared, depth 0 or infinity;
// on a name that does not exist it makes an empty file, RFC 4918 section
// 9.10.4), or with no body a refresh of a lock the If header names.
func (d *DAV) lock(w http.ResponseWriter, r *http.Request, tree *store.Tree, user, prefix, name string) {
	timeout := parseTimeout(r.Header.Get("Timeout"))
	body, err := io.ReadAll(io.LimitReader(r.Body, maxXMLBody+1))
	if err != nil || len(body) > maxXMLBody {
		http.Error(w, "bad LOCK body", http.StatusBadRequest)
		return
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		holds, submitted, ok := d.ifHeader(r, tree, user, prefix, name)
		for _, tok := range submitted {
			if !ok || !holds {
				break
			}
			if l, err := d.locks().Refresh(user, name, tok, timeout); err == nil {
				writeLockDiscovery(w, http.StatusOK, prefix, l)
				return
			}
		}
		http.Error(w, "no lock of yours to refresh here", http.StatusPreconditionFailed)
		return
	}
	var li lockInfo
	if err := xml.Unmarshal(body, &li); err != nil || (li.Exclusive == nil) == (li.Shared == nil) || li.Write == nil {
		http.Error(w, "LOCK wants a lockinfo with an exclusive or shared write lock", http.StatusBadRequest)
		return
	}
	depth := locks.Infinity
	switch r.Header.Get("Depth") {
	case "", "infinity", "Infinity":
	case "0":
		depth = 0
	default:
		http.Error(w, "LOCK takes Depth 0 or infinity", http.StatusBadRequest)
		return
	}
	// Locking an existing file needs no other lock's token (a conflict is
	// Create's to find); making a new one in a locked folder does.
	_, statErr := tree.Stat(name)
	var changes []locks.Change
	if statErr != nil {
		changes = append(changes, locks.Change{Path: name, Member: true})
	}
	if !d.conditions(w, r, tree, user, prefix, name, changes...) {
		return
	}
	owner := ""
	if li.Owner != nil {
		owner = li.Owner.Inner
	}
	created := false
	if errors.Is(statErr, os.ErrNotExist) {
		if _, err := tree.Stat(path.Dir(path.Clean("/" + name))); err != nil {
			http.Error(w, "the folder does not exist", http.StatusConflict)
			return
		}
		created = true
	}
	l, err := d.locks().Create(user, name, depth, li.Shared != nil, owner, timeout)
	if err != nil {
		http.Error(w, err.Error(), http.StatusLocked)
		return
	}
	status := http.StatusOK
	if created {
		u, err := tree.Create(name, false)
		if err == nil {
			err = u.Close()
		}
		if err != nil {
			d.locks().Unlock(user, name, l.Token)
			WriteStoreError(w, err)
			return
		}
		status = http.StatusCreated
	}
	w.Header().Set("Lock-Token", "<"+l.Token+">")
	writeLockDiscovery(w, status, prefix, l)
}

// unlock answers UNLOCK: the Lock-Token must name a lock covering the path.
func (d *DAV) unlock(w http.ResponseWriter, r *http.Request, user, name string) {
	tok := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(r.Header.Get("Lock-Token")), "<"), ">")
	if tok == "" {
		http.Error(w, "UNLOCK needs a Lock-Token", http.StatusBadRequest)
		return
	}
	if err := d.locks().Unlock(user, name, tok); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// parseTimeout reads a Timeout header ("Second-600", "Infinite", maybe a
// list); the table caps what it gets.
func parseTimeout(h string) time.Duration {
	for _, v := range strings.Split(h, ",") {
		v = strings.TrimSpace(v)
		if n, ok := strings.CutPrefix(v, "Second-"); ok {
			if s, err := strconv.ParseInt(n, 10, 64); err == nil && s > 0 {
				return time.Duration(min(s, int64(locks.MaxTimeout/time.Second))) * time.Second
			}
		}
	}
	return locks.MaxTimeout
}

func writeLockDiscovery(w http.ResponseWriter, status int, prefix string, l locks.Lock) {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><D:prop xmlns:D="DAV:"><D:lockdiscovery>%s</D:lockdiscovery></D:prop>`,
		activeLock(prefix, l))
}

// activeLock is a lock as a DAV:activelock element.
func activeLock(prefix string, l locks.Lock) string {
	scope, depth := "exclusive", "infinity"
	if l.Shared {
		scope = "shared"
	}
	if l.Depth == 0 {
		depth = "0"
	}
	owner := ""
	if l.Owner != "" {
		owner = "<owner>" + l.Owner + "</owner>"
	}
	return fmt.Sprintf(`<activelock xmlns="DAV:"><locktype><write/></locktype><lockscope><%s/></lockscope><depth>%s</depth>%s`+
		`<timeout>Second-%d</timeout><locktoken><href>%s</href></locktoken><lockroot><href>%s</href></lockroot></activelock>`,
		scope, depth, owner, int(l.Timeout.Seconds()), l.Token, xmlText((&url.URL{Path: prefix + l.Root}).EscapedPath()))
}

var supportedLock = webdav.Property{XMLName: xml.Name{Space: "DAV:", Local: "supportedlock"}, InnerXML: []byte(
	`<lockentry xmlns="DAV:"><lockscope><exclusive/></lockscope><locktype><write/></locktype></lockentry>` +
		`<lockentry xmlns="DAV:"><lockscope><shared/></lockscope><locktype><write/></locktype></lockentry>`)}

package files

// LOCK and UNLOCK, on the box's lock table (package locks), which has
// shared locks and which SFTP honours too. Every request that changes
// something has its If header and the locks in its way checked first
// (request.conditions).

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/rights"
)

// lockSpace is where the locks of the path p (the user's) are kept: with
// its owner's paths, so that a lock on a shared file holds for everyone
// who reaches it, the owner and every recipient.
func (q *request) lockSpace(p string) (user, at string) {
	if owner, op, err := q.tree.Owner(p); err == nil {
		return owner, op
	}
	return q.user, p
}

// maxLockOwner bounds a lock's DAV:owner, which clients fill with a user
// name or a URL: with MaxPerUser locks, a user's locks hold at most 1 MiB.
const maxLockOwner = 4 << 10

// seenAt is the lock l as the user sees it at p (whose locks are kept at
// ownerPath): its root in the user's paths. A lock taken above a shared
// folder shows as the share's top.
func seenAt(l locks.Lock, p, ownerPath string) locks.Lock {
	p, ownerPath = locks.Clean(p), locks.Clean(ownerPath)
	if p == ownerPath {
		return l
	}
	below, ok := strings.CutPrefix(ownerPath, l.Root)
	if l.Root == "/" {
		below, ok = ownerPath, true
	}
	if root, cut := strings.CutSuffix(p, below); ok && cut && root != "" {
		l.Root = root
	} else {
		l.Root = p
	}
	return l
}

// lock answers LOCK: a new lock (exclusive or shared, depth 0 or infinity;
// on a name that does not exist it makes an empty file, RFC 4918 section
// 9.10.4), or with no body a refresh of a lock the If header names.
func (q *request) lock() {
	w, r, name := q.w, q.r, q.name
	timeout := parseTimeout(r.Header.Get("Timeout"))
	body, err := davxml.ReadBody(r.Body)
	if err != nil {
		http.Error(w, "bad LOCK body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		holds, submitted, ok := q.ifHeader()
		for _, tok := range submitted {
			if !ok || !holds {
				break
			}
			space, at := q.lockSpace(name)
			if l, err := q.h.Locks.Refresh(space, at, tok, timeout); err == nil {
				writeLockDiscovery(w, http.StatusOK, q.prefix, seenAt(l, name, at))
				return
			}
		}
		http.Error(w, "no lock of yours to refresh here", http.StatusPreconditionFailed)
		return
	}
	li, err := davxml.ParseLockinfo(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
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
	_, statErr := q.tree.Stat(name)
	if statErr == nil || errors.Is(statErr, fs.ErrPermission) {
		// A lock is a claim to write: a read-only share's recipient, or
		// a drop's visitor (who cannot even see what is there), holding
		// the owner's files locked would lock the owner out.
		if perm, err := q.tree.PermAt(name); err == nil && perm&rights.Update == 0 {
			http.Error(w, "this share does not let its files be changed: they cannot be locked", http.StatusForbidden)
			return
		}
	}
	var changes []locks.Change
	if statErr != nil {
		changes = append(changes, locks.Change{Path: name, Member: true})
	}
	if !q.conditions(changes...) {
		return
	}
	owner := string(li.Owner)
	if len(owner) > maxLockOwner {
		// Kept with the lock and sent back in every lockdiscovery: a
		// name or a URL, not a megabyte per lock.
		http.Error(w, fmt.Sprintf("the lock's owner is over %d bytes", maxLockOwner), http.StatusBadRequest)
		return
	}
	created := false
	if errors.Is(statErr, os.ErrNotExist) {
		if _, err := q.tree.Stat(path.Dir(path.Clean("/" + name))); err != nil {
			http.Error(w, "the folder does not exist", http.StatusConflict)
			return
		}
		created = true
	}
	space, at := q.lockSpace(name)
	l, err := q.h.Locks.Create(space, at, depth, li.Shared, owner, timeout)
	if errors.Is(err, locks.ErrTooMany) {
		w.Header().Set("Retry-After", "60")
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusLocked)
		return
	}
	status := http.StatusOK
	if created {
		u, err := q.tree.Create(name, false)
		if err == nil {
			err = u.Close()
		}
		if err != nil {
			q.h.Locks.Unlock(space, at, l.Token)
			writeStoreError(w, err)
			return
		}
		status = http.StatusCreated
	}
	w.Header().Set("Lock-Token", "<"+l.Token+">")
	writeLockDiscovery(w, status, q.prefix, seenAt(l, name, at))
}

// unlock answers UNLOCK: the Lock-Token must name a lock covering the path.
func (q *request) unlock() {
	w := q.w
	tok := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(q.r.Header.Get("Lock-Token")), "<"), ">")
	if tok == "" {
		http.Error(w, "UNLOCK needs a Lock-Token", http.StatusBadRequest)
		return
	}
	if space, at := q.lockSpace(q.name); q.h.Locks.Unlock(space, at, tok) != nil {
		http.Error(w, fmt.Sprintf("no lock %s on %s", tok, q.name), http.StatusConflict)
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
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><d:prop xmlns:d="DAV:"><d:lockdiscovery>%s</d:lockdiscovery></d:prop>`,
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
		scope, depth, owner, int(l.Timeout.Seconds()), l.Token, davxml.Text((&url.URL{Path: prefix + l.Root}).EscapedPath()))
}

// supportedLock is DAV:supportedlock's value: exclusive and shared write locks.
const supportedLock = `<d:lockentry><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockentry>` +
	`<d:lockentry><d:lockscope><d:shared/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockentry>`

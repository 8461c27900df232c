package files

// PROPFIND: what sync clients send most, over folders of thousands of
// files, and on the board every system call counts. Each entry of a folder
// is described from the open folder (store.Tree.InfoIn: an fstatat and a
// getxattr, the file never opened), its dead properties are read only when
// the request may want them, and the answer is written as it is walked
// (davxml.Writer), so Depth infinity over any tree takes the memory of one
// folder's names.

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/store"
)

// wantsDead says whether a PROPFIND may ask for dead properties: allprop,
// propname, or a name that is not a live property. The ownCloud and
// Nextcloud namespaces are the server's: no dead property is there, so
// asking for one (oc:share-types...) reads none.
func wantsDead(req davxml.Propfind) bool {
	if req.AllProp || req.PropName {
		return true
	}
	for _, name := range req.Names {
		if !liveProps[name] && name.Space != davxml.NSOC && name.Space != davxml.NSNC {
			return true
		}
	}
	return false
}

// propfind answers a PROPFIND.
func (q *request) propfind() {
	req, err := davxml.ReadPropfind(q.r.Body)
	if err != nil {
		http.Error(q.w, err.Error(), http.StatusBadRequest)
		return
	}
	depth := -1
	switch q.r.Header.Get("Depth") {
	case "0":
		depth = 0
	case "1":
		depth = 1
	case "", "infinity", "Infinity":
	default:
		http.Error(q.w, "Depth must be 0, 1 or infinity", http.StatusBadRequest)
		return
	}
	top, err := q.tree.Info(q.name)
	if err != nil {
		writeStoreError(q.w, err)
		return
	}
	pw := &propWriter{q: q, m: davxml.NewWriter(q.w), req: req, wantDead: wantsDead(req)}
	clean := path.Clean("/" + q.name)
	pw.entry(clean, top, func() (map[xml.Name]deadProp, error) {
		f, err := q.tree.Open(q.name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return fdProps(f)
	})
	if top.IsDir() && depth != 0 {
		pw.folder(clean, depth)
	}
	pw.m.Close("")
}

// propWriter writes a multistatus answer as it walks.
type propWriter struct {
	q        *request
	m        *davxml.Writer
	req      davxml.Propfind
	wantDead bool
	quota    *[2]int64 // used, available; read once
	favs     map[uint64]bool
	shares   map[uint64][]int
	// found and missing are one entry's propstats, their memory kept
	// from entry to entry.
	found, missing davxml.Props
}

// permissions are oc:permissions: what may be done with the entry p, as
// Nextcloud's letters say it: S shared with the user, R reshareable, G
// readable, D deletable, N renamable, V movable, W writable (a file), C
// and K files and folders may be made in it.
func (pw *propWriter) permissions(p string, dir bool) string {
	tree := pw.q.tree
	perm, err := tree.PermAt(p)
	if err != nil {
		return ""
	}
	var b strings.Builder
	owner, _, _ := tree.Owner(p)
	_, mountTop := tree.MountAt(p)
	if owner != pw.q.user {
		b.WriteString("S")
	}
	if perm&rights.Share != 0 && owner == pw.q.user {
		b.WriteString("R")
	}
	if perm&rights.Read != 0 {
		b.WriteString("G")
	}
	if perm&rights.Delete != 0 || mountTop { // a share's top is left, or renamed, by its recipient
		b.WriteString("DNV")
	}
	if !dir && perm&rights.Update != 0 {
		b.WriteString("W")
	}
	if dir && perm&rights.Create != 0 {
		b.WriteString("CK")
	}
	return b.String()
}

// shareTypes are the kinds of share the user made of each file id, read
// once per answer.
func (pw *propWriter) shareTypes() map[uint64][]int {
	if pw.shares == nil {
		pw.shares = map[uint64][]int{}
		if s := pw.q.h.Shares; s != nil {
			pw.shares = s.Types(pw.q.user)
		}
	}
	return pw.shares
}

// favorites are the user's favourites, read once per answer.
func (pw *propWriter) favorites() map[uint64]bool {
	if pw.favs == nil {
		pw.favs = (&matcher{q: pw.q}).favorites()
	}
	return pw.favs
}

// folder writes the entries of the folder p, and at depth infinity theirs.
func (pw *propWriter) folder(p string, depth int) {
	tree := pw.q.tree
	dir, err := tree.OpenDir(p)
	if err != nil {
		return
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return
	}
	var sub []string
	for _, n := range names {
		if store.IsInternal(n) { // an upload's temporary file from before the staging folder
			continue
		}
		child := path.Join(p, n)
		in, ok, err := tree.InfoIn(dir, n)
		if !ok {
			in, err = tree.Info(child) // a symlink: followed, inside the tree
		}
		if err != nil {
			continue // gone since the listing, or a link that leads out
		}
		pw.entry(child, in, func() (map[xml.Name]deadProp, error) {
			if ok {
				return deadProps(store.PropsIn(dir, n))
			}
			f, err := tree.Open(child)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return fdProps(f)
		})
		if in.IsDir() && depth < 0 {
			sub = append(sub, child)
		}
	}
	for _, s := range sub {
		pw.folder(s, depth)
	}
}

// entry writes one response.
func (pw *propWriter) entry(p string, in store.Info, dead func() (map[xml.Name]deadProp, error)) {
	var deadMap map[xml.Name]deadProp
	if pw.wantDead {
		if m, err := dead(); err == nil {
			deadMap = m
		}
	}
	pw.q.tree.Seen(p, in.FileID) // a client asks for previews and versions by id
	href := pw.q.prefix + p
	if in.IsDir() && !strings.HasSuffix(href, "/") {
		href += "/"
	}
	if !in.IsDir() && p == "/" {
		href = pw.q.prefix // a link's shared file is its root
	}
	found, missing := &pw.found, &pw.missing
	found.Reset()
	missing.Reset()
	switch {
	case pw.req.PropName:
		for _, n := range allLive {
			if !in.IsDir() || n != davxml.Name("getcontentlength") && n != davxml.Name("getcontenttype") {
				found.Add(n, "", "")
			}
		}
		for n := range deadMap {
			found.Add(n, "", "")
		}
	case pw.req.AllProp:
		for _, n := range allLive {
			pw.live(found, n, p, in)
		}
		for n, prop := range deadMap {
			found.Add(n, prop.Lang, prop.Inner)
		}
		for _, n := range pw.req.Names { // include
			if !slices.Contains(allLive, n) {
				pw.one(found, missing, n, p, in, deadMap)
			}
		}
	default:
		for _, n := range pw.req.Names {
			pw.one(found, missing, n, p, in, deadMap)
		}
	}
	pw.m.Response(href, davxml.Propstat{Status: http.StatusOK, Props: found}, davxml.Propstat{Status: http.StatusNotFound, Props: missing})
}

// one writes the property n to found, or its name to missing.
func (pw *propWriter) one(found, missing *davxml.Props, n xml.Name, p string, in store.Info, dead map[xml.Name]deadProp) {
	if liveProps[n] {
		if pw.live(found, n, p, in) {
			return
		}
	} else if prop, ok := dead[n]; ok {
		found.Add(n, prop.Lang, prop.Inner)
		return
	}
	missing.Add(n, "", "")
}

// live writes the live property n if the entry has it, and reports whether
// it did.
func (pw *propWriter) live(found *davxml.Props, n xml.Name, p string, in store.Info) bool {
	dir := in.IsDir()
	put := func(v string) bool { found.Add(n, "", v); return true }
	switch n {
	case davxml.Name("resourcetype"):
		if dir {
			return put("<d:collection/>")
		}
		return put("")
	case davxml.Name("displayname"):
		if p == "/" {
			return put("")
		}
		return put(davxml.Text(path.Base(p)))
	case davxml.Name("getcontentlength"):
		if !dir {
			return put(strconv.FormatInt(in.Size(), 10))
		}
	case davxml.Name("getlastmodified"):
		return put(in.ModTime().UTC().Format(http.TimeFormat))
	case davxml.Name("getcontenttype"):
		if !dir {
			return put(davxml.Text(filetype.Of(p)))
		}
	case davxml.Name("getetag"):
		return put(davxml.Text(quote(in.ETag)))
	case davxml.Name("supportedlock"):
		return put(supportedLock)
	case davxml.Name("lockdiscovery"):
		var b strings.Builder
		space, at := pw.q.lockSpace(p)
		for _, l := range pw.q.h.Locks.On(space, at) {
			b.WriteString(activeLock(pw.q.prefix, seenAt(l, p, at)))
		}
		return put(b.String())
	case quotaUsed, quotaAvailable:
		if !dir {
			return false
		}
		if q := pw.quotas(); q != nil {
			if n == quotaUsed {
				return put(strconv.FormatInt(q[0], 10))
			}
			return put(strconv.FormatInt(q[1], 10))
		}
	case ocFileID:
		return put(strconv.FormatUint(in.FileID, 10))
	case ocID:
		return put(ocIDOf(in.FileID))
	case ocPermissions:
		return put(pw.permissions(p, dir))
	case ocShareTypes:
		var b strings.Builder
		for _, t := range pw.shareTypes()[in.FileID] {
			fmt.Fprintf(&b, "<oc:share-type>%d</oc:share-type>", t)
		}
		return put(b.String())
	case ncMountType:
		if owner, _, err := pw.q.tree.Owner(p); err == nil && owner != pw.q.user {
			return put("shared")
		}
		return put("")
	case ocOwnerID, ocOwnerName:
		owner, _, err := pw.q.tree.Owner(p)
		if err != nil || pw.q.link { // a link names no one, as its page does
			return false
		}
		return put(davxml.Text(owner))
	case ocSize: // a folder's: what its files take, kept as they change
		if !dir {
			return put(strconv.FormatInt(in.Size(), 10))
		}
		n := in.TreeSize
		if n < 0 {
			var err error
			if n, err = pw.q.tree.Size(p); err != nil {
				return false
			}
		}
		return put(strconv.FormatInt(n, 10))
	case ocChecksums:
		if !dir && in.Sums != nil {
			return put("<oc:checksum>" + checksumsText(in.Sums) + "</oc:checksum>")
		}
	case ocDownloadURL, ocDDC:
		return put("")
	case ocFavorite:
		if pw.favorites()[in.FileID] {
			return put("1")
		}
		return put("0")
	case ncHasPreview: // by the name: a listing opens no file
		return put(strconv.FormatBool(!dir && filetype.Previewable(p)))
	}
	return false
}

// quotas are the user's used and available bytes, read once per request.
func (pw *propWriter) quotas() *[2]int64 {
	if pw.quota == nil {
		tree := pw.q.tree
		used, err1 := tree.Usage()
		avail, err2 := tree.Free()
		if err1 != nil || err2 != nil {
			return nil
		}
		if q := tree.Quota(); q > 0 {
			avail = max(0, min(avail, q-used))
		}
		pw.quota = &[2]int64{used, avail}
	}
	return pw.quota
}

// checksumsText is oc:checksum's text: "SHA1:hex[ MD5:hex]".
func checksumsText(s *store.Sums) string {
	t := "SHA1:" + fmt.Sprintf("%x", s.SHA1)
	if s.HasMD5 {
		t += " MD5:" + fmt.Sprintf("%x", s.MD5)
	}
	return t
}

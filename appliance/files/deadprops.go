package files

// Dead properties (RFC 4918 section 4): what clients store with PROPPATCH,
// kept in an extended attribute of the file, so that they move with it,
// are copied with it and vanish with it.

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/store"
)

// storedProp is one dead property as the attribute holds it (JSON).
type storedProp struct {
	Space, Local string
	Lang         string `json:",omitempty"`
	XML          []byte
}

// deadProp is a dead property's value.
type deadProp struct {
	Lang  string
	Inner string // XML that declares every namespace it uses
}

// deadProps decodes the dead properties the store keeps with a file
// (store.Props).
func deadProps(b []byte, err error) (map[xml.Name]deadProp, error) {
	if err != nil {
		return nil, err
	}
	m := map[xml.Name]deadProp{}
	var stored []storedProp
	if len(b) == 0 || json.Unmarshal(b, &stored) != nil {
		return m, nil
	}
	for _, s := range stored {
		m[xml.Name{Space: s.Space, Local: s.Local}] = deadProp{Lang: s.Lang, Inner: string(s.XML)}
	}
	return m, nil
}

// fdProps reads the dead properties of an open file.
func fdProps(f store.File) (map[xml.Name]deadProp, error) { return deadProps(store.Props(f)) }

// proppatch answers PROPPATCH: the properties set or removed, all or none,
// but {DAV:}lastmodified, which sets the file's date (as ownCloud,
// Nextcloud and rclone use it).
func (q *request) proppatch() {
	if _, err := q.tree.Stat(q.name); err != nil {
		writeStoreError(q.w, err)
		return
	}
	patches, err := davxml.ReadProppatch(q.r.Body)
	if err != nil {
		http.Error(q.w, err.Error(), http.StatusBadRequest)
		return
	}
	f, err := q.tree.Open(q.name)
	if err != nil {
		writeStoreError(q.w, err)
		return
	}
	defer f.Close()
	stats, err := q.patch(f, patches)
	if err != nil {
		q.refused("PROPPATCH", err)
		return
	}
	m := davxml.NewWriter(q.w)
	m.Response(q.r.URL.Path, stats...)
	m.Close("")
}

// patch applies patches to the file f. A property that cannot be set (a
// live one, the ownCloud and Nextcloud ones, a date that is none) fails
// them all: it is answered with its status, the others with 424.
func (q *request) patch(f store.File, patches []davxml.Patch) ([]davxml.Propstat, error) {
	m, err := fdProps(f)
	if err != nil {
		return nil, err
	}
	for name := range m {
		if liveProps[name] {
			delete(m, name)
		}
	}
	var mtime time.Time
	var favorite *bool
	changes := false // the file's own properties or date, not the user's star
	for _, p := range patches {
		if p.Name != ocFavorite || q.favorites() == nil {
			changes = true
		}
	}
	if changes {
		// Properties and dates are the file's, and the owner's: a share
		// must let them be changed (favourites are the user's own).
		if perm, err := q.tree.PermAt(q.name); err != nil {
			return nil, err
		} else if perm&rights.Update == 0 {
			return nil, &fs.PathError{Op: "change (the share is read-only)", Path: q.name, Err: fs.ErrPermission}
		}
	}
	for _, p := range patches {
		code, why := http.StatusOK, ""
		switch {
		case p.Name == lastModifiedProp && !p.Remove:
			if mtime, err = parseModTime(string(p.Inner)); err != nil {
				code = http.StatusConflict
			}
		case p.Name == ocFavorite && q.favorites() != nil:
			// The star: the user's, kept by file id (package favorites).
			v, ok := literal(ocFavorite, strings.TrimSpace(string(p.Inner)))
			on := !p.Remove && ok && v != 0
			if !p.Remove && !ok {
				code = http.StatusConflict
			}
			favorite = &on
		case liveProps[p.Name] || p.Name.Space == davxml.NSOC || p.Name.Space == davxml.NSNC:
			code, why = http.StatusForbidden, "<d:cannot-modify-protected-property/>"
		case p.Remove:
			delete(m, p.Name)
		default:
			m[p.Name] = deadProp{Lang: p.Lang, Inner: string(p.Inner)}
		}
		if code != http.StatusOK {
			return failedPatch(patches, p.Name, code, why), nil
		}
	}
	var all davxml.Props
	for _, p := range patches {
		all.Add(p.Name, "", "")
	}
	if changes { // (the star alone writes nothing on the file)
		if err := storeProps(f, m); err != nil {
			// The file system cannot hold them (no extended attributes,
			// or full): nothing is changed, the date neither.
			return []davxml.Propstat{{Status: http.StatusInsufficientStorage, Props: &all}}, nil
		}
	}
	if !mtime.IsZero() {
		if err := q.tree.SetModTime(q.name, mtime); err != nil {
			return nil, err
		}
	}
	if favorite != nil {
		in, err := q.tree.Describe(f)
		if err == nil {
			err = q.favorites().Mark(q.user, in.FileID, *favorite)
		}
		if err != nil {
			return nil, err
		}
	}
	return []davxml.Propstat{{Status: http.StatusOK, Props: &all}}, nil
}

// failedPatch is the answer to a PROPPATCH that failed at bad: its status
// for it, 424 Failed Dependency for the others (RFC 4918 section 9.2).
func failedPatch(patches []davxml.Patch, bad xml.Name, code int, why string) []davxml.Propstat {
	var failed, others davxml.Props
	failed.Add(bad, "", "")
	for _, p := range patches {
		if p.Name != bad {
			others.Add(p.Name, "", "")
		}
	}
	return []davxml.Propstat{{Status: code, Props: &failed, Error: why}, {Status: http.StatusFailedDependency, Props: &others}}
}

// storeProps writes m as the file's dead properties (none: the attribute
// goes).
func storeProps(f store.File, m map[xml.Name]deadProp) error {
	if len(m) == 0 {
		return store.SetProps(f, nil)
	}
	stored := make([]storedProp, 0, len(m))
	for name, p := range m {
		stored = append(stored, storedProp{Space: name.Space, Local: name.Local, Lang: p.Lang, XML: []byte(p.Inner)})
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return fmt.Errorf("dead properties: %w", err)
	}
	return store.SetProps(f, b)
}

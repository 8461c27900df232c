package store

// Folder sizes, kept as the files change.
//
// A folder's record (user.bonesync.tag) holds its change tag (meta.go)
// and, with the store's epoch, the bytes of the files below it. Every
// change through the store already writes a new tag on each folder from
// the changed one up to the top; it adds the change's bytes to the size
// in the same write. A size is read with the tag, at no cost, for the
// ownCloud and Nextcloud clients' oc:size (the desktop client asks before
// syncing a large folder) and for the user's usage.
//
// A size that is missing, or written under another epoch (a power cut can
// land between a change and its record, and renews the epoch: see Open),
// is counted again when asked for, by a walk that records the size of
// every folder it passes, bottom up. A folder whose tag changed while it
// was counted (something below it changed) is left uncounted, so a count
// never records a size a concurrent change has made wrong. Files changed
// behind the store's back are counted again after the next unclean stop.

import (
	"crypto/rand"
	"encoding/binary"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// folderRecordLen is a folder's record: tag, epoch, size, and the
// folder's id where the store made the folder (24 bytes without it: the
// folder's inode number is its id).
const folderRecordLen = 8 + 8 + 8 + 8

// folderRecord is what a folder's attribute holds.
type folderRecord struct {
	tag   [8]byte
	sized bool // size is this epoch's
	size  int64
	id    uint64 // 0: none, the inode number stands in
}

// readFolder reads a folder's record through x; an 8-byte attribute (an
// earlier version's, a tag only) has no size.
func (s *Store) readFolder(x xattrs) (folderRecord, bool) {
	var b [folderRecordLen]byte
	n, err := x.get(tagAttr, b[:])
	var r folderRecord
	if err != nil || n != 8 && n != 24 && n != folderRecordLen {
		return r, false
	}
	copy(r.tag[:], b[:8])
	if n >= 24 && [8]byte(b[8:16]) == s.epoch {
		r.sized, r.size = true, int64(binary.BigEndian.Uint64(b[16:24]))
	}
	if n == folderRecordLen {
		r.id = binary.BigEndian.Uint64(b[24:])
	}
	return r, true
}

// writeFolder writes a folder's record on the open folder fd.
func (s *Store) writeFolder(fd int, r folderRecord) error {
	b := make([]byte, 0, folderRecordLen)
	b = append(b, r.tag[:]...)
	if r.sized {
		b = append(b, s.epoch[:]...)
		b = binary.BigEndian.AppendUint64(b, uint64(max(0, r.size)))
	} else {
		b = append(b, make([]byte, 16)...)
	}
	if r.id != 0 {
		b = binary.BigEndian.AppendUint64(b, r.id)
	}
	return unix.Fsetxattr(fd, tagAttr, b, 0)
}

// newFolder gives the folder the store just made at c an id of its own
// and a first record. Inode numbers are reused as soon as they are freed,
// so an id that was one could name, after a delete, a new folder that no
// share, link or listing ever meant; a random id never does.
func (t *Tree) newFolder(c string) error {
	d, err := t.root.Open(c)
	if err != nil {
		return err
	}
	defer d.Close()
	r := folderRecord{id: newFileID()}
	rand.Read(r.tag[:])
	r.sized = true // empty
	return t.s.writeFolder(int(d.Fd()), r)
}

// sizeChange marks a change of the bytes in the user's files, from before
// it touches the disk until its folders' records are written (done): a
// count that overlaps one, which may have seen the file and then see its
// bytes added to the record, records nothing.
func (t *Tree) sizeChange() (done func()) {
	us := t.s.usageOf(t.user)
	us.changing.Add(1)
	return func() {
		us.changed.Add(1)
		us.changing.Add(-1)
	}
}

// touchUp gives the folder c and every folder above it a new change tag,
// and adds delta bytes to their sizes. Errors are ignored: a file system
// without extended attributes still serves, its folder ETags following
// the folders' own times and its sizes counted when asked for.
func (t *Tree) touchUp(c string, delta int64) {
	t.upTo(c, func(r *folderRecord) {
		rand.Read(r.tag[:])
		r.size += delta
	})
}

// upTo changes the record of the folder c and of every folder above it,
// to the top of the owner's tree (for a share's tree, above its own top).
func (t *Tree) upTo(c string, change func(r *folderRecord)) {
	l := &t.s.usageOf(t.user).sizes
	l.Lock()
	for {
		if d, err := t.root.Open(c); err == nil {
			r, _ := t.s.readFolder(fdXattrs(d.Fd()))
			change(&r)
			t.s.writeFolder(int(d.Fd()), r)
			d.Close()
		}
		if c == "." {
			break
		}
		c = parent(c)
	}
	l.Unlock()
	if t.home != nil && t.prefix != "." {
		t.home.upTo(parent(t.prefix), change)
	}
}

// folderSize is the bytes of the files at or below the folder c: its
// record's, or counted (and recorded) if it has none.
func (t *Tree) folderSize(c string) (int64, error) {
	d, err := t.root.Open(c)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	return t.countFolder(d)
}

// countFolder counts the open folder d, from the records of the folders
// below it where they have one, and records what it counted.
func (t *Tree) countFolder(d *os.File) (int64, error) {
	before, had := t.s.readFolder(fdXattrs(d.Fd()))
	if before.sized {
		return before.size, nil
	}
	us := t.s.usageOf(t.user)
	changed, quiet := us.changed.Load(), us.changing.Load() == 0
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	var sum int64
	var first error
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(int(d.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone since
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			sum += st.Size
		case unix.S_IFDIR:
			fd, err := unix.Openat(int(d.Fd()), n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				first = cmpOr(first, &fs.PathError{Op: "open", Path: path.Join(d.Name(), n), Err: err})
				continue
			}
			sub := os.NewFile(uintptr(fd), path.Join(d.Name(), n))
			size, err := t.countFolder(sub)
			sub.Close()
			first = cmpOr(first, err)
			sum += size
		}
	}
	if first != nil {
		return sum, first
	}
	// Recorded unless something below changed meanwhile (its tag did).
	l := &t.s.usageOf(t.user).sizes
	l.Lock()
	defer l.Unlock()
	if !quiet || us.changing.Load() != 0 || us.changed.Load() != changed {
		return sum, nil // a change overlapped: counted again when next asked
	}
	if now, _ := t.s.readFolder(fdXattrs(d.Fd())); now.tag == before.tag {
		if !had { // a folder never changed through the store: a tag of its own
			rand.Read(before.tag[:])
		}
		before.sized, before.size = true, sum
		t.s.writeFolder(int(d.Fd()), before)
	}
	return sum, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// unsize gives the folder c and every folder above it a new tag and no
// size: a change whose bytes are not known (a removal that failed part of
// the way) is counted when next asked.
func (t *Tree) unsize(c string) {
	t.upTo(c, func(r *folderRecord) {
		*r = folderRecord{id: r.id}
		rand.Read(r.tag[:])
	})
}

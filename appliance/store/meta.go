package store

// Where a file's metadata lives.
//
// A file's modification time is the file system's own mtime, set on the
// upload's temporary file before it is renamed into place. Its checksums
// and its file id live in one extended attribute, user.bonesync, written on
// the temporary file before the fsync and the rename: content, digests and
// date are one inode, so they become visible together and a power cut
// leaves either the old inode or the new one, each whole. On ext4 with
// 256-byte inodes the record (37 bytes, 53 with an MD5) sits in the inode
// itself.
//
// Every upload gets a SHA-1, the digest the ownCloud/Nextcloud clients and
// rclone's nextcloud vendor use. An MD5 or Adler-32 is computed only when a
// client sends one to check (MD5 is then kept too): on the board's core
// each digest computed as the bytes stream costs about a seventh of what
// receiving them over TLS does, and MD5 would double that for a digest few
// clients ask for.
//
// A folder's ETag must change when anything below it changes, so a sync
// client can skip a subtree whose ETag it already knows. Every change
// through the store writes a new random tag (user.bonesync.tag) on each
// folder from the changed one up to the top, after the change itself: a
// client that reads a folder's new tag sees the change under it. A crash
// can land between a change and its tags; the store's epoch, part of every
// folder ETag, is renewed at a start that follows an unclean stop (see
// Open), so after a power cut every folder ETag changes once and clients
// walk their trees again.

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/rights"
)

const (
	metaAttr   = "user.bonesync"     // a file's Meta
	tagAttr    = "user.bonesync.tag" // a folder's change tag
	metaFormat = 1
	metaLen    = 1 + 8 + 8 + sha1.Size // and md5.Size more with an MD5
)

// Sums are a file's digests, computed as its content streamed in.
type Sums struct {
	SHA1   [sha1.Size]byte
	MD5    [md5.Size]byte // when HasMD5
	HasMD5 bool
}

// meta is what the metadata record holds.
type meta struct {
	FileID uint64
	Size   int64 // the size the digests are of: a file changed behind the store's back no longer matches
	Sums
}

func (m meta) encode() []byte {
	b := make([]byte, 0, metaLen)
	b = append(b, metaFormat)
	b = binary.BigEndian.AppendUint64(b, m.FileID)
	b = binary.BigEndian.AppendUint64(b, uint64(m.Size))
	b = append(b, m.SHA1[:]...)
	if m.HasMD5 {
		b = append(b, m.MD5[:]...)
	}
	return b
}

func decodeMeta(b []byte) (meta, bool) {
	var m meta
	if len(b) != metaLen && len(b) != metaLen+md5.Size || b[0] != metaFormat {
		return m, false
	}
	m.FileID = binary.BigEndian.Uint64(b[1:])
	m.Size = int64(binary.BigEndian.Uint64(b[9:]))
	copy(m.SHA1[:], b[17:])
	if len(b) > metaLen {
		copy(m.MD5[:], b[metaLen:])
		m.HasMD5 = true
	}
	return m, true
}

func readMeta(x xattrs) (meta, bool) {
	var buf [metaLen + md5.Size + 1]byte
	n, err := x.get(metaAttr, buf[:])
	if err != nil {
		return meta{}, false
	}
	return decodeMeta(buf[:n])
}

// xattrs reads a file's extended attributes: through its descriptor, or by
// its name in an open folder.
type xattrs interface {
	get(attr string, buf []byte) (int, error)
}

type fdXattrs int

func (fd fdXattrs) get(attr string, buf []byte) (int, error) {
	return unix.Fgetxattr(int(fd), attr, buf)
}

// pathXattrs reads the attributes of the file at a path, not following a
// final symlink: for the store's own files (the trash), not the tree's.
type pathXattrs string

func (p pathXattrs) get(attr string, buf []byte) (int, error) {
	return unix.Lgetxattr(string(p), attr, buf)
}

// inDir names an entry of an open folder through /proc/self/fd, so its
// attributes can be read without opening it. base is one name (no "/", not
// ".."), and the last component is not followed: nothing outside the
// folder can be reached.
type inDir struct {
	dir  *os.File
	base string
}

func (e inDir) path() string { return "/proc/self/fd/" + strconv.Itoa(int(e.dir.Fd())) + "/" + e.base }

func (e inDir) get(attr string, buf []byte) (int, error) { return unix.Lgetxattr(e.path(), attr, buf) }

// Info describes a file or folder with what sync clients compare.
type Info struct {
	fs.FileInfo
	// ETag is a strong entity tag, without quotes: for a file it changes
	// whenever its content or its date does; for a folder whenever anything
	// below it changes.
	ETag string
	// FileID stays with a file across renames and new versions.
	FileID uint64
	// Sums are the file's digests; nil for a folder, or for a file put in
	// the store's directory from outside it.
	Sums *Sums
	// TreeSize is a folder's files' bytes, as its record keeps them
	// (sizes.go); -1 when it has none yet (FolderSize counts it).
	TreeSize int64
}

// Info describes the named file or folder.
func (t *Tree) Info(p string) (Info, error) {
	if m, ok := t.MountAt(p); ok {
		return t.mountInfo(m)
	}
	tt, c, err := t.at(p, rights.Read)
	if err != nil {
		return Info{}, err
	}
	f, err := tt.root.Open(c)
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	in, err := tt.s.info(f)
	if err == nil && c == "." && tt == t && t.s.mounts != nil && t.prefix == "" {
		in.ETag = t.topETag(in.ETag)
	}
	return in, err
}

// info describes an open file.
func (s *Store) info(f *os.File) (Info, error) {
	fi, err := f.Stat()
	if err != nil {
		return Info{}, err
	}
	return s.describe(fi, fdXattrs(f.Fd())), nil
}

// OpenDir opens a folder of the tree, to describe its entries with InfoIn.
func (t *Tree) OpenDir(p string) (File, error) {
	t, c, err := t.at(p, rights.Read)
	if err != nil {
		return nil, err
	}
	d, err := t.root.Open(c)
	if err != nil {
		return nil, err
	}
	if fi, err := d.Stat(); err != nil || !fi.IsDir() {
		d.Close()
		return nil, fmt.Errorf("%s: not a folder", p)
	}
	return d, nil
}

// procFD is whether /proc/self/fd can name a folder's entries (it is not
// mounted everywhere); InfoIn is only a shortcut, Info always works.
var procFD = func() bool {
	_, err := os.Stat("/proc/self/fd")
	return err == nil
}()

// InfoIn describes the entry base of dir (from OpenDir) without opening it:
// one fstatat and one getxattr, where Info opens and closes the file. ok is
// false where Info must be used instead: for a symlink (Info follows it,
// inside the tree), or without /proc.
func (t *Tree) InfoIn(dir File, base string) (in Info, ok bool, err error) {
	d, err := opened(dir)
	if err != nil {
		return Info{}, false, err
	}
	if !procFD || base == "" || base == "." || base == ".." || strings.ContainsRune(base, '/') {
		return Info{}, false, nil
	}
	if m, ok := t.mountOf(base); ok && t.isTop(d) {
		in, err := t.mountInfo(m)
		return in, true, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.Fd()), base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, true, &fs.PathError{Op: "stat", Path: base, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return Info{}, false, nil
	}
	return t.s.describe(statInfo{name: base, st: st}, inDir{d, base}), true, nil
}

// describe is info's work on a file's attributes.
func (s *Store) describe(fi fs.FileInfo, x xattrs) Info {
	st, _ := fi.Sys().(*syscall.Stat_t)
	in := Info{FileInfo: fi}
	var ino uint64
	var ctime int64
	if st != nil {
		ino, ctime = st.Ino, st.Ctim.Nano()
	}
	if fi.IsDir() {
		in.TreeSize = -1
		in.FileID = ino
		if r, ok := s.readFolder(x); ok {
			in.ETag = etag("d", s.epoch[:], r.tag[:])
			if r.sized {
				in.TreeSize = r.size
			}
			if r.id != 0 { // made by the store: an id of its own (newFolder)
				in.FileID = r.id
			}
		} else { // never changed through the store: its own times stand in
			in.ETag = etag("d", s.epoch[:], u64(ino), i64(fi.ModTime().UnixNano()), i64(ctime))
		}
		return in
	}
	m, ok := readMeta(x)
	if ok && m.Size == fi.Size() {
		in.FileID, in.Sums = m.FileID, &m.Sums
		in.ETag = etag("f", m.SHA1[:], i64(fi.ModTime().UnixNano()))
		return in
	}
	in.FileID = ino
	if ok { // changed behind the store's back: the digests are stale, the id holds
		in.FileID = m.FileID
	}
	in.ETag = etag("f", u64(ino), i64(fi.Size()), i64(fi.ModTime().UnixNano()), i64(ctime))
	return in
}

// statInfo is an fs.FileInfo from fstatat.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i statInfo) Name() string { return i.name }
func (i statInfo) Size() int64  { return i.st.Size }
func (i statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	default:
		m |= fs.ModeIrregular
	}
	return m
}
func (i statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i statInfo) IsDir() bool        { return i.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (i statInfo) Sys() any {
	return &syscall.Stat_t{Ino: i.st.Ino, Ctim: syscall.Timespec(i.st.Ctim), Mtim: syscall.Timespec(i.st.Mtim)}
}

func etag(kind string, parts ...[]byte) string {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func i64(v int64) []byte  { return u64(uint64(v)) }

// newFileID is a random id for a file the store has not seen before. Random
// rather than counted, so that no counter has to be written anywhere.
func newFileID() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:])>>1 | 1
}

func parent(c string) string {
	i := strings.LastIndexByte(c, '/')
	if i < 0 {
		return "."
	}
	return c[:i]
}

// ErrChecksum is returned (wrapped) when an upload's content does not match
// the checksum its client sent.
var ErrChecksum = errors.New("the content does not match its checksum")

// Checksum is a digest a client sent with its upload.
type Checksum struct {
	Algo string // "SHA1", "MD5" or "ADLER32"
	Sum  []byte
}

func (c Checksum) String() string { return c.Algo + ":" + hex.EncodeToString(c.Sum) }

// hasher computes an upload's digests as its bytes stream in.
type hasher struct {
	sha1   hash.Hash
	md5    hash.Hash   // only when a client sent an MD5 to check
	adler  hash.Hash32 // only when a client sent an Adler-32
	n      int64       // bytes hashed: the content up to here
	broken bool        // a write out of order: hash again at commit
}

func newHasher() *hasher { return &hasher{sha1: newSHA1()} }

// like is a new hasher that computes what h does.
func (h *hasher) like() *hasher {
	n := newHasher()
	if h.md5 != nil {
		n.md5 = md5.New()
	}
	if h.adler != nil {
		n.adler = adler32.New()
	}
	return n
}

func (h *hasher) Write(b []byte) (int, error) {
	h.sha1.Write(b)
	if h.md5 != nil {
		h.md5.Write(b)
	}
	if h.adler != nil {
		h.adler.Write(b)
	}
	h.n += int64(len(b))
	return len(b), nil
}

// wrote records a write of n bytes at off.
func (h *hasher) wrote(b []byte, off int64) {
	switch {
	case h.broken:
	case off == h.n:
		h.Write(b)
	default:
		h.broken = true
	}
}

func (h *hasher) sums() Sums {
	var s Sums
	h.sha1.Sum(s.SHA1[:0])
	if h.md5 != nil {
		h.md5.Sum(s.MD5[:0])
		s.HasMD5 = true
	}
	return s
}

func (h *hasher) check(want Checksum) error {
	var got []byte
	switch want.Algo {
	case "SHA1":
		got = h.sha1.Sum(nil)
	case "MD5":
		if h.md5 == nil {
			return fmt.Errorf("md5 not computed")
		}
		got = h.md5.Sum(nil)
	case "ADLER32":
		if h.adler == nil {
			return fmt.Errorf("adler32 not computed")
		}
		got = h.adler.Sum(nil)
	default:
		return fmt.Errorf("checksum type %q not supported", want.Algo)
	}
	if string(got) != string(want.Sum) {
		return fmt.Errorf("%w: %s, computed %s", ErrChecksum, want, Checksum{want.Algo, got})
	}
	return nil
}

// SetModTime sets a file's or folder's modification time, as a client that
// keeps dates (WebDAV's PROPPATCH, X-OC-Mtime on MOVE) asks.
func (t *Tree) SetModTime(p string, mtime time.Time) error { return t.SetTimes(p, time.Time{}, mtime) }

// Describe describes a file opened from the tree (Open).
func (t *Tree) Describe(f File) (Info, error) {
	o, err := opened(f)
	if err != nil {
		return Info{}, err
	}
	return t.s.info(o)
}

// RecordedSHA1 is the SHA-1 the store recorded for the open file f, and
// the size it is of; ok is false if f holds no record. A file changed
// behind the store's back has a size that no longer matches.
func RecordedSHA1(f File) (sum [sha1.Size]byte, size int64, ok bool) {
	o, err := opened(f)
	if err != nil {
		return sum, 0, false
	}
	m, ok := readMeta(fdXattrs(o.Fd()))
	return m.SHA1, m.Size, ok
}

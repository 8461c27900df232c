package store

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"errors"
	"fmt"
	"hash/adler32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func put(t *testing.T, tr *Tree, p, content string, mtime time.Time) Info {
	t.Helper()
	u, err := tr.Create(p, false)
	if err != nil {
		t.Fatalf("Create(%s): %v", p, err)
	}
	u.SetModTime(mtime)
	if _, err := u.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatalf("commit %s: %v", p, err)
	}
	return u.Result()
}

func info(t *testing.T, tr *Tree, p string) Info {
	t.Helper()
	in, err := tr.Info(p)
	if err != nil {
		t.Fatalf("Info(%s): %v", p, err)
	}
	return in
}

func TestUploadKeepsDateAndDigests(t *testing.T) {
	tr, _ := tree(t)
	when := time.Date(2019, 3, 4, 5, 6, 7, 123456789, time.UTC)
	res := put(t, tr, "sub/doc.txt", "sync me", when)
	in := info(t, tr, "sub/doc.txt")
	if !in.ModTime().Equal(when) {
		t.Errorf("mtime = %v, want the client's %v", in.ModTime(), when)
	}
	if in.Sums == nil || in.Sums.SHA1 != sha1.Sum([]byte("sync me")) || in.Sums.HasMD5 {
		t.Fatalf("Sums = %+v, want the SHA-1 of the content and no MD5", in.Sums)
	}
	if in.ETag != res.ETag || in.FileID != res.FileID || res.Name() != "doc.txt" {
		t.Errorf("Info after commit = %s/%d, Result = %s/%d %q", in.ETag, in.FileID, res.ETag, res.FileID, res.Name())
	}
	// A same-size edit that carries the old date gets a new ETag, keeps its id.
	again := put(t, tr, "sub/doc.txt", "SYNC ME", when)
	if again.ETag == in.ETag {
		t.Error("a same-size edit with the same date kept the ETag")
	}
	if again.FileID != in.FileID {
		t.Errorf("a new version changed the file id %d -> %d", in.FileID, again.FileID)
	}
	// A rename keeps id, date and digests.
	if err := tr.Rename("sub/doc.txt", "moved.txt"); err != nil {
		t.Fatal(err)
	}
	if m := info(t, tr, "moved.txt"); m.FileID != in.FileID || !m.ModTime().Equal(when) || m.ETag != again.ETag {
		t.Errorf("after rename: id %d date %v etag %s", m.FileID, m.ModTime(), m.ETag)
	}
	// SetModTime changes the ETag.
	if err := tr.SetModTime("moved.txt", when.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if m := info(t, tr, "moved.txt"); m.ETag == again.ETag || !m.ModTime().Equal(when.Add(time.Hour)) {
		t.Errorf("after SetModTime: etag %s (was %s), date %v", m.ETag, again.ETag, m.ModTime())
	}
}

func TestChecksumMismatchKeepsOldFile(t *testing.T) {
	tr, _ := tree(t)
	good := sha1.Sum([]byte("right"))
	for _, c := range []Checksum{
		{"SHA1", good[:]},
		{"MD5", md5.New().Sum(nil)},
		{"ADLER32", []byte{0, 0, 0, 1}},
	} {
		u, _ := tr.Create("hello.txt", false)
		u.Expect(c)
		u.Write([]byte("wrong"))
		if err := u.Close(); !errors.Is(err, ErrChecksum) {
			t.Errorf("%s mismatch: Close = %v, want ErrChecksum", c.Algo, err)
		}
		if b := read(t, tr, "hello.txt"); b != "hello" {
			t.Errorf("after a %s mismatch hello.txt = %q", c.Algo, b)
		}
	}
	// An MD5 the client sends is checked and kept.
	md := md5.Sum([]byte("right"))
	u, _ := tr.Create("md5.txt", false)
	u.Expect(Checksum{"MD5", md[:]})
	u.Write([]byte("right"))
	if err := u.Close(); err != nil {
		t.Fatalf("matching MD5: %v", err)
	}
	if in := info(t, tr, "md5.txt"); !in.Sums.HasMD5 || in.Sums.MD5 != md {
		t.Errorf("the checked MD5 was not kept: %+v", in.Sums)
	}
	ad := adler32.Checksum([]byte("right"))
	u, _ = tr.Create("hello.txt", false)
	u.Expect(Checksum{"SHA1", good[:]})
	u.Expect(Checksum{"ADLER32", []byte{byte(ad >> 24), byte(ad >> 16), byte(ad >> 8), byte(ad)}})
	u.Write([]byte("right"))
	if err := u.Close(); err != nil {
		t.Errorf("matching SHA1 and ADLER32: %v", err)
	}
	if leftovers(t, tr) != 0 {
		t.Error("temp files left behind")
	}
}

// SFTP writes arrive out of order; the digests are of the final content.
func TestOutOfOrderWritesHashed(t *testing.T) {
	tr, _ := tree(t)
	u, _ := tr.Create("ooo.bin", false)
	u.WriteAt([]byte("world"), 5)
	u.WriteAt([]byte("hello"), 0)
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if in := info(t, tr, "ooo.bin"); in.Sums.SHA1 != sha1.Sum([]byte("helloworld")) {
		t.Error("out-of-order writes: digest is not of the content")
	}
}

func TestFolderETagsPropagate(t *testing.T) {
	tr, _ := tree(t)
	for _, d := range []string{"a", "a/b", "a/b/c", "x"} {
		if err := tr.Mkdir(d); err != nil {
			t.Fatal(err)
		}
	}
	snap := func() map[string]string {
		m := map[string]string{}
		for _, d := range []string{".", "a", "a/b", "a/b/c", "x"} {
			m[d] = info(t, tr, d).ETag
		}
		return m
	}
	check := func(what string, changed ...string) {
		t.Helper()
		before := snap()
		switch what {
		case "upload":
			put(t, tr, "a/b/c/f.txt", what, time.Now())
		case "touch":
			tr.SetModTime("a/b/c/f.txt", time.Unix(1e9, 0))
		case "rename":
			tr.Rename("a/b/c/f.txt", "a/g.txt")
		case "remove":
			tr.Remove("a/g.txt")
		case "mkdir":
			tr.Mkdir("a/b/new")
		}
		after := snap()
		want := map[string]bool{}
		for _, c := range changed {
			want[c] = true
		}
		for d := range before {
			if (before[d] != after[d]) != want[d] {
				t.Errorf("%s: ETag of %q changed = %v, want %v", what, d, before[d] != after[d], want[d])
			}
		}
	}
	check("upload", ".", "a", "a/b", "a/b/c")
	check("touch", ".", "a", "a/b", "a/b/c")
	check("rename", ".", "a", "a/b", "a/b/c")
	check("remove", ".", "a")
	check("mkdir", ".", "a", "a/b")
}

func TestEpochRenewedAfterUncleanStop(t *testing.T) {
	dir := t.TempDir()
	etagOf := func(s *Store) string {
		tr, _ := s.Tree("bob")
		defer tr.Close()
		return info(t, tr, ".").ETag
	}
	s, _ := Open(dir)
	first := etagOf(s)
	s.Close()
	s, _ = Open(dir)
	if e := etagOf(s); e != first {
		t.Errorf("after a clean stop the top ETag changed %s -> %s", first, e)
	}
	// No Close: a power cut.
	s2, _ := Open(dir)
	if e := etagOf(s2); e == first {
		t.Error("after an unclean stop the top ETag stayed the same")
	}
}

func TestNamesNormalisedToNFC(t *testing.T) {
	tr, _ := tree(t)
	nfd, nfc := "Cafe\u0301.txt", "Caf\u00e9.txt"
	put(t, tr, nfd, "one", time.Now())
	put(t, tr, nfc, "two", time.Now())
	list, _ := tr.ReadDir(".")
	n := 0
	for _, fi := range list {
		if strings.HasPrefix(fi.Name(), "Caf") {
			n++
			if fi.Name() != nfc {
				t.Errorf("stored as %q, want NFC %q", fi.Name(), nfc)
			}
		}
	}
	if n != 1 || read(t, tr, nfd) != "two" {
		t.Errorf("NFC and NFD spellings made %d files", n)
	}
}

func TestLongestNames(t *testing.T) {
	tr, _ := tree(t)
	name := strings.Repeat("n", 255)
	put(t, tr, name, "x", time.Now())
	if read(t, tr, name) != "x" {
		t.Error("a 255-byte name did not round-trip")
	}
	if _, err := tr.Create(strings.Repeat("n", 256), false); err != nil {
		t.Logf("256 bytes: refused at create (%v)", err)
	} else {
		// Refused at the rename at latest: never a silent success.
		u, _ := tr.Create(strings.Repeat("n", 256), false)
		if err := u.Close(); err == nil {
			t.Error("a 256-byte name was accepted")
		}
	}
}

// A power cut between any two steps of a commit leaves, after the next
// start, either the old file with its old digests or the new file with its
// new ones: never content and digest that disagree, never a stale folder
// ETag.
func TestCommitCrashAtEveryStep(t *testing.T) {
	for n := 1; n <= len(commitSteps); n++ {
		t.Run(fmt.Sprintf("after step %d", n), func(t *testing.T) {
			dir := t.TempDir()
			s, _ := Open(dir)
			tr, _ := s.Tree("carol")
			tr.Mkdir("d")
			put(t, tr, "d/f.txt", "old content", time.Unix(1e9, 0))
			top := info(t, tr, ".").ETag
			s.Close()
			s, _ = Open(dir)
			tr, _ = s.Tree("carol")
			u, _ := tr.Create("d/f.txt", false)
			u.SetModTime(time.Unix(2e9, 0))
			u.Write([]byte("new content!"))
			// The power goes after n steps: nothing after them runs, no
			// clean-up either.
			if err := u.commit(n); err != nil {
				t.Fatalf("the first %d steps: %v", n, err)
			}
			u.f.Close()
			// The next start, without a clean Close.
			s2, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			s2.RemoveStaleUploads()
			tr2, _ := s2.Tree("carol")
			defer tr2.Close()
			in := info(t, tr2, "d/f.txt")
			content := read(t, tr2, "d/f.txt")
			if in.Sums == nil || in.Sums.SHA1 != sha1.Sum([]byte(content)) {
				t.Errorf("content %q disagrees with its digest", content)
			}
			if content == "new content!" && info(t, tr2, ".").ETag == top {
				t.Error("the new content is there but the top ETag is the old one")
			}
			if content != "old content" && content != "new content!" {
				t.Errorf("content %q is neither version", content)
			}
			if n, _ := os.ReadDir(filepath.Join(dir, ownDir, "staging")); len(n) != 0 {
				t.Errorf("staging holds %d files after the restart", len(n))
			}
		})
	}
}

// The record fits an ext4 inode's spare room beside the dead-property
// attribute's header.
func TestMetaRecordSmall(t *testing.T) {
	for _, m := range []meta{{FileID: 42, Size: 7}, {FileID: 43, Size: 8, Sums: Sums{HasMD5: true, MD5: [16]byte{1}}}} {
		b := m.encode()
		if len(b) > 60 {
			t.Errorf("record is %d bytes", len(b))
		}
		if back, ok := decodeMeta(b); !ok || back != m {
			t.Errorf("decode(encode(%+v)) = %+v, %v", m, back, ok)
		}
	}
	if _, ok := decodeMeta(bytes.Repeat([]byte{9}, metaLen)); ok {
		t.Error("a record of another format decoded")
	}
}

// A file changed behind the store's back loses its stale digests.
func TestOutsideEditDropsDigests(t *testing.T) {
	tr, _ := tree(t)
	put(t, tr, "f.txt", "abc", time.Now())
	p := filepath.Join(tr.s.dir, "alice", "f.txt")
	os.WriteFile(p, []byte("abcd"), 0o644)
	if in := info(t, tr, "f.txt"); in.Sums != nil {
		t.Error("a file edited outside the store still reports its old digests")
	}
	var buf [100]byte
	if _, err := unix.Getxattr(p, metaAttr, buf[:]); err != nil {
		t.Skip("no user xattrs here")
	}
}

func TestQuota(t *testing.T) {
	tr, _ := tree(t) // holds hello.txt, 5 bytes
	tr.SetQuota(100)
	put(t, tr, "a.bin", strings.Repeat("a", 60), time.Now())
	if used, _ := tr.Usage(); used != 65 {
		t.Fatalf("usage = %d, want 65", used)
	}
	u, _ := tr.Create("b.bin", false)
	if _, err := u.Write([]byte(strings.Repeat("b", 50))); !errors.Is(err, ErrQuota) {
		t.Errorf("a write past the quota = %v, want ErrQuota", err)
	}
	if err := u.Close(); !errors.Is(err, ErrQuota) {
		t.Errorf("Close = %v", err)
	}
	// Replacing a file counts only the difference.
	put(t, tr, "a.bin", strings.Repeat("A", 90), time.Now())
	if used, _ := tr.Usage(); used != 95 {
		t.Errorf("usage after a replace = %d, want 95", used)
	}
	tr.Remove("a.bin")
	if used, _ := tr.Usage(); used != 5 {
		t.Errorf("usage after a remove = %d, want 5", used)
	}
	if err := tr.Fits(96); !errors.Is(err, ErrQuota) {
		t.Errorf("Fits(96) = %v", err)
	}
	if leftovers(t, tr) != 0 {
		t.Error("a refused upload left its temp file")
	}
}

// Names written in NFD before the store normalised them are renamed once,
// at start, so they stay reachable.
func TestNormaliseNamesMigrates(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	home := filepath.Join(dir, "dora")
	os.MkdirAll(filepath.Join(home, "Fe\u0301tes"), 0o755)
	os.WriteFile(filepath.Join(home, "Fe\u0301tes", "Cafe\u0301.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(home, "both-e\u0301"), []byte("nfd"), 0o644)
	os.WriteFile(filepath.Join(home, "both-\u00e9"), []byte("nfc"), 0o644)
	n, problems := s.NormaliseNames()
	if n != 2 || len(problems) != 1 {
		t.Errorf("NormaliseNames = %d renamed, problems %v; want 2 and the clash", n, problems)
	}
	tr, _ := s.Tree("dora")
	defer tr.Close()
	if read(t, tr, "F\u00e9tes/Caf\u00e9.txt") != "x" || read(t, tr, "both-\u00e9") != "nfc" {
		t.Error("the migrated file is not reachable by its NFC name")
	}
}

// InfoIn, the shortcut for listings, says what Info says, and leaves
// symlinks to Info.
func TestInfoInAgrees(t *testing.T) {
	tr, _ := tree(t)
	put(t, tr, "sub/f.txt", "content", time.Unix(1e9, 0))
	tr.Mkdir("sub/d")
	dir, err := tr.OpenDir("sub")
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for _, name := range []string{"f.txt", "d"} {
		got, ok, err := tr.InfoIn(dir, name)
		want := info(t, tr, "sub/"+name)
		if !ok || err != nil || got.ETag != want.ETag || got.FileID != want.FileID || got.Size() != want.Size() ||
			!got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() || (got.Sums == nil) != (want.Sums == nil) {
			t.Errorf("InfoIn(%s) = %+v %v %v, Info = %+v", name, got, ok, err, want)
		}
	}
	top, _ := tr.OpenDir(".")
	defer top.Close()
	if _, ok, _ := tr.InfoIn(top, "abs-link"); ok {
		t.Error("InfoIn described a symlink itself")
	}
	if _, _, err := tr.InfoIn(dir, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("InfoIn(missing) = %v, want ErrNotExist", err)
	}
}

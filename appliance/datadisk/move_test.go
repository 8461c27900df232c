package datadisk

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// record is a store record (store/meta.go, format 1) for content b.
func record(id uint64, b []byte) []byte {
	r := []byte{1}
	r = binary.BigEndian.AppendUint64(r, id)
	r = binary.BigEndian.AppendUint64(r, uint64(len(b)))
	s := sha1.Sum(b)
	return append(r, s[:]...)
}

func put(t *testing.T, root, rel string, b []byte, withRecord bool) {
	t.Helper()
	p := filepath.Join(root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o640); err != nil {
		t.Fatal(err)
	}
	if withRecord {
		if err := unix.Setxattr(p, "user.bonesync", record(uint64(len(rel)), b), 0); err != nil {
			t.Skipf("no user xattrs here: %v", err)
		}
	}
	when := time.Date(2020, 1, 2, 3, 4, 5, 123456789, time.UTC).Add(time.Duration(len(b)) * time.Second)
	os.Chtimes(p, when, when)
}

// same trees: every entry of a is in b with its bytes, time, mode and
// attributes, and b has nothing else.
func sameTrees(t *testing.T, a, b string) {
	t.Helper()
	n := 0
	filepath.WalkDir(a, func(p string, d fs.DirEntry, _ error) error {
		rel, _ := filepath.Rel(a, p)
		q := filepath.Join(b, rel)
		fa, _ := os.Lstat(p)
		fb, err := os.Lstat(q)
		if err != nil {
			t.Errorf("%s: not moved: %v", rel, err)
			return nil
		}
		n++
		if fa.Mode() != fb.Mode() || !fa.ModTime().Equal(fb.ModTime()) {
			t.Errorf("%s: mode %v time %v, moved as %v %v", rel, fa.Mode(), fa.ModTime(), fb.Mode(), fb.ModTime())
		}
		if d.Type().IsRegular() {
			ba, _ := os.ReadFile(p)
			bb, _ := os.ReadFile(q)
			if !bytes.Equal(ba, bb) {
				t.Errorf("%s: other bytes", rel)
			}
			if !same(fa, p, q) {
				t.Errorf("%s: other attributes", rel)
			}
		}
		return nil
	})
	m := 0
	filepath.WalkDir(b, func(string, fs.DirEntry, error) error { m++; return nil })
	if m != n {
		t.Errorf("the disk holds %d entries, the card %d", m, n)
	}
}

func TestMove(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "files.moving")
	os.Mkdir(dst, 0o755)
	for i := 0; i < 120; i++ {
		put(t, src, fmt.Sprintf("u%d/Photos/%03d.jpg", i%3, i), bytes.Repeat([]byte{byte(i)}, 1000+i*37), true)
	}
	put(t, src, "u0/no record.txt", []byte("plain"), false)
	put(t, src, "u0/.bonesync-moving", []byte("a user's file of that name"), true)
	put(t, src, "u0/.bonesync-moving-file", []byte("and of this one"), true)
	put(t, src, ".bonesync/ids/x", []byte("the store's own"), false)
	unix.Setxattr(filepath.Join(src, "u1"), "user.bonesync.tag", []byte("tag-1"), 0)
	// A file the card damaged: its bytes no longer what the store recorded.
	put(t, src, "u2/damaged.bin", []byte("what was uploaded"), true)
	rec := record(9, []byte("what was uploaded"))
	os.WriteFile(filepath.Join(src, "u2/damaged.bin"), []byte("what the card holds"[:17]), 0o640)
	unix.Setxattr(filepath.Join(src, "u2/damaged.bin"), "user.bonesync", rec, 0)

	// A first pass cut short, then one that completes it.
	ctx, cancel := context.WithCancel(context.Background())
	var p Progress
	go func() {
		for p.Files.Load() < 30 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if err := Move(ctx, src, dst, &p, time.Time{}); err == nil {
		t.Log("the first pass finished before it was cut")
	}
	os.WriteFile(filepath.Join(filepath.Dir(dst), movingName), []byte("half"), 0o600) // a power cut's leftover
	p = Progress{}
	if err := Move(context.Background(), src, dst, &p, time.Time{}); err != nil {
		t.Fatal(err)
	}
	sameTrees(t, src, dst)
	if p.Damaged.Load() != 1 {
		t.Errorf("damaged files counted: %d, want 1", p.Damaged.Load())
	}
	if p.TotalFiles.Load() != 125 {
		t.Errorf("total files %d, want 125", p.TotalFiles.Load())
	}

	// The server changed the card since: one file added, one removed, one
	// replaced, a folder removed. The final pass copies only those.
	put(t, src, "u0/new.txt", []byte("new"), true)
	os.Remove(filepath.Join(src, "u1/Photos/001.jpg"))
	put(t, src, "u2/Photos/002.jpg", []byte("replaced, same size?"), true)
	os.RemoveAll(filepath.Join(src, "u0/Photos"))
	// A file where a folder was, and a folder where a file was.
	os.RemoveAll(filepath.Join(src, "u1/Photos"))
	put(t, src, "u1/Photos", []byte("now a file"), true)
	os.Remove(filepath.Join(src, "u2/Photos/005.jpg"))
	put(t, src, "u2/Photos/005.jpg/inside.txt", []byte("now a folder"), true)
	p = Progress{}
	if err := Move(context.Background(), src, dst, &p, time.Time{}); err != nil {
		t.Fatal(err)
	}
	sameTrees(t, src, dst)
	if got := p.Files.Load(); got != 4 {
		t.Errorf("the final pass copied %d files, want 4 (the new, the replaced, the two of a changed type)", got)
	}
	if p.Removed.Load() != 1 {
		t.Errorf("removed %d, want 1 (u0/Photos; u1/Photos went as it became a file)", p.Removed.Load())
	}

	// Written in place, its size and date kept (as a client may set them
	// back): the last pass, given the move's start, copies it again.
	started := time.Now().Add(-time.Second)
	f := filepath.Join(src, "u2/Photos/002.jpg")
	fi, _ := os.Stat(f)
	os.WriteFile(f, []byte("replaced, same size!"), 0o640)
	os.Chtimes(f, fi.ModTime(), fi.ModTime())
	p = Progress{}
	if err := Move(context.Background(), src, dst, &p, started); err != nil {
		t.Fatal(err)
	}
	sameTrees(t, src, dst)
	if p.Files.Load() < 1 {
		t.Error("a file written in place with its size and date kept was not copied again")
	}
}

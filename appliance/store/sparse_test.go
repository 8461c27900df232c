package store

import (
	"context"
	"crypto/sha1"
	"errors"
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

// held is what a file of the tree keeps on the disk.
func held(t *testing.T, tr *Tree, p string) int64 {
	t.Helper()
	f, err := tr.open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st unix.Stat_t
	unix.Fstat(int(f.Fd()), &st)
	return st.Blocks * 512
}

// sparse writes p as 1 MiB of data, a hole, and 1 MiB at the end.
func sparse(t *testing.T, tr *Tree, p string, size int64) []byte {
	t.Helper()
	u, err := tr.Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if _, err := u.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := u.WriteAt(data, size-int64(len(data))); err != nil {
		t.Skipf("this disk has no room for a %d-byte hole: %v", size, err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	return data
}

// sha1Of is the SHA-1 of the sparse file's content, written out.
func sha1Of(data []byte, size int64) [20]byte {
	h := sha1.New()
	h.Write(data)
	zero := make([]byte, 1<<20)
	for left := size - 2*int64(len(data)); left > 0; left -= int64(len(zero)) {
		h.Write(zero[:min(left, int64(len(zero)))])
	}
	h.Write(data)
	var s [20]byte
	h.Sum(s[:0])
	return s
}

// A file written with a hole: committed at the speed of its data (no
// digest of the hole's zeros at commit, made when asked and right), and a
// WebDAV COPY of it, or an SFTP open that keeps its content, keeps the
// hole (both wrote it out densely).
func TestHolesKept(t *testing.T) {
	tr, _ := tree(t)
	const size = 256 << 20
	data := sparse(t, tr, "big.img", size)
	in := info(t, tr, "big.img")
	if in.Size() != size || in.Sums != nil || in.FileID == 0 {
		t.Errorf("a file of mostly holes: size %d, digests %v (made at commit), id %d", in.Size(), in.Sums, in.FileID)
	}
	want := sha1Of(data, size)
	if got, err := tr.Sum("big.img", "sha1"); err != nil || [20]byte(got) != want {
		t.Errorf("its SHA-1 when asked: %x %v, want %x", got, err, want)
	}
	src, _ := tr.Open("big.img")
	u, _ := tr.Create("copy.img", false)
	if err := u.CopyFrom(src, size); err != nil {
		t.Fatal(err)
	}
	src.Close()
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	u, err := tr.Create("big.img", true) // an SFTP open without truncation
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"copy.img", "big.img"} {
		if h := held(t, tr, p); h > 8<<20 {
			t.Errorf("%s holds %d bytes on the disk: its hole was written out", p, h)
		}
		if got, err := tr.Sum(p, "sha1"); err != nil || [20]byte(got) != want {
			t.Errorf("%s's content changed: %x %v", p, got, err)
		}
	}
}

// A file written out of order whose client went away before its digest
// was made: committed without it (made later when asked), not hashed on
// for a client that is not there; a digest asked by a client that goes
// stops.
func TestDigestStopsWhenTheClientGoes(t *testing.T) {
	tr, _ := tree(t)
	ctx, cancel := context.WithCancel(context.Background())
	tr.SetContext(ctx)
	u, _ := tr.Create("f.bin", false)
	part := make([]byte, 3<<20)
	for i := range part {
		part[i] = byte(i)
	}
	u.WriteAt(part[1<<20:], 1<<20) // out of order
	u.WriteAt(part[:1<<20], 0)
	cancel()
	if err := u.Close(); err != nil {
		t.Fatalf("the file was not kept: %v", err)
	}
	in := info(t, tr, "f.bin")
	if in.Sums != nil || in.Size() != int64(len(part)) {
		t.Errorf("committed with digests %v, %d bytes", in.Sums, in.Size())
	}
	if _, err := tr.Sum("f.bin", "sha1"); !errors.Is(err, context.Canceled) {
		t.Errorf("a digest for a client gone: %v", err)
	}
	tr.SetContext(context.Background())
	if got, err := tr.Sum("f.bin", "sha1"); err != nil || [20]byte(got) != sha1.Sum(part) {
		t.Errorf("the digest made later: %x %v", got, err)
	}
	f, _ := tr.Open("f.bin")
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != string(part) {
		t.Error("the content changed")
	}
}

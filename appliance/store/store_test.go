package store

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree returns alice's tree in a fresh store, next to a secret outside it and
// symlinks planted inside that point at the secret.
func tree(t *testing.T) (*Tree, string) {
	t.Helper()
	top := t.TempDir()
	secret := filepath.Join(top, "secret")
	os.WriteFile(secret, []byte("SECRET"), 0o600)
	s, err := Open(filepath.Join(top, "files"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.Tree("alice")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	home := filepath.Join(s.Dir(), "alice")
	os.WriteFile(filepath.Join(home, "hello.txt"), []byte("hello"), 0o644)
	os.Mkdir(filepath.Join(home, "sub"), 0o755)
	os.Symlink(secret, filepath.Join(home, "abs-link"))
	os.Symlink("../../secret", filepath.Join(home, "rel-link"))
	os.Symlink("/", filepath.Join(home, "root-link"))
	os.Symlink("hello.txt", filepath.Join(home, "inside-link"))
	return tr, secret
}

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "."}, {"/", "."}, {"a/b", "a/b"}, {"/a/b/", "a/b"}, {"../../etc/passwd", "etc/passwd"},
		{"/a/../../b", "b"}, {"a/./b//c", "a/b/c"}, {"..", "."}, {"...", "..."},
	} {
		if got, err := Clean(tc.in); got != tc.want || err != nil {
			t.Errorf("Clean(%q) = %q, %v, want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"a\x00b", "a\\..\\b", "x\n", ".f.upload-00ff", "d/.f.upload-1/x"} {
		if _, err := Clean(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("Clean(%q) = %v, want ErrBadName", bad, err)
		}
	}
}

func TestNoEscape(t *testing.T) {
	tr, _ := tree(t)
	for _, p := range []string{"abs-link", "rel-link", "root-link/etc/passwd", "../secret", "/../../secret", "sub/../../secret", "../files/alice/../../secret"} {
		f, err := tr.Open(p)
		if err == nil {
			b, _ := io.ReadAll(f)
			f.Close()
			if strings.Contains(string(b), "SECRET") {
				t.Errorf("Open(%q) read the secret outside the tree", p)
			}
		}
	}
	// Writing through a planted link must not reach outside either.
	if u, err := tr.Create("abs-link", false); err == nil {
		u.Write([]byte("pwned"))
		u.Close()
	}
	if u, err := tr.Create("root-link/tmp/pwned", false); err == nil {
		u.Close()
		t.Error("Create through a symlink to / succeeded")
	}
	if err := tr.Rename("hello.txt", "root-link/tmp/moved"); err == nil {
		t.Error("Rename into a symlink to / succeeded")
	}
	if err := tr.RemoveAll("."); err == nil {
		t.Error("RemoveAll of the tree's top succeeded")
	}
	// A link that stays inside is fine.
	if f, err := tr.Open("inside-link"); err != nil {
		t.Errorf("Open(inside-link) = %v", err)
	} else {
		f.Close()
	}
}

func TestSecretUntouched(t *testing.T) {
	tr, secret := tree(t)
	if u, err := tr.Create("abs-link", false); err == nil {
		u.Write([]byte("pwned"))
		u.Close()
	}
	if b, _ := os.ReadFile(secret); string(b) != "SECRET" {
		t.Errorf("secret outside the tree is now %q", b)
	}
}

func TestUploadAtomic(t *testing.T) {
	tr, _ := tree(t)
	u, err := tr.Create("hello.txt", false)
	if err != nil {
		t.Fatal(err)
	}
	u.Write([]byte("new content, half"))
	// Mid-upload, readers see the old file and listings hide the temp.
	if b := read(t, tr, "hello.txt"); b != "hello" {
		t.Errorf("during upload hello.txt = %q, want the old content", b)
	}
	list, _ := tr.ReadDir("/")
	for _, fi := range list {
		if strings.Contains(fi.Name(), uploadMarker) {
			t.Errorf("listing shows the upload's temp file %s", fi.Name())
		}
	}
	u.Fail(errors.New("connection lost"))
	if err := u.Close(); err == nil {
		t.Error("Close after Fail = nil, want the transfer error")
	}
	if b := read(t, tr, "hello.txt"); b != "hello" {
		t.Errorf("after a failed upload hello.txt = %q, want the old content", b)
	}
	u, _ = tr.Create("hello.txt", false)
	u.Write([]byte("bye"))
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if b := read(t, tr, "hello.txt"); b != "bye" {
		t.Errorf("after upload hello.txt = %q, want bye", b)
	}
	if leftovers(t, tr) != 0 {
		t.Error("temp files left behind")
	}
	// Resuming keeps the existing content.
	u, _ = tr.Create("hello.txt", true)
	u.WriteAt([]byte("!"), 3)
	u.Close()
	if b := read(t, tr, "hello.txt"); b != "bye!" {
		t.Errorf("after resume hello.txt = %q, want bye!", b)
	}
}

func TestStaleUploadsRemovedAtStart(t *testing.T) {
	top := t.TempDir()
	s, _ := Open(top)
	tr, _ := s.Tree("bob")
	u, _ := tr.Create("big.iso", false)
	u.Write([]byte("partial"))
	// Power cut: the process dies without Close.
	tr.Close()
	s.RemoveStaleUploads()
	tr, _ = s.Tree("bob")
	defer tr.Close()
	if n := leftovers(t, tr); n != 0 {
		t.Errorf("%d stale temp files survived RemoveStaleUploads", n)
	}
	if _, err := tr.Stat("big.iso"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an interrupted first upload left big.iso: %v", err)
	}
}

func read(t *testing.T, tr *Tree, p string) string {
	t.Helper()
	f, err := tr.Open(p)
	if err != nil {
		t.Fatalf("Open(%s): %v", p, err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b)
}

// leftovers counts uploads' temporary files: in the staging folder, and
// beside their targets as versions before it left them.
func leftovers(t *testing.T, tr *Tree) int {
	names, _ := os.ReadDir(filepath.Join(tr.s.own, "staging"))
	n := len(names)
	fs.WalkDir(tr.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && isUploadTemp(d.Name()) {
			n++
		}
		return nil
	})
	return n
}

func TestBadUserNames(t *testing.T) {
	s, _ := Open(t.TempDir())
	for _, u := range []string{"", ".", "..", "a/b", "../x"} {
		if tr, err := s.Tree(u); err == nil {
			tr.Close()
			t.Errorf("Tree(%q) succeeded", u)
		}
	}
}

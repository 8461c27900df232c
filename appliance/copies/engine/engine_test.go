package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rclone/rclone/fs"

	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/store"
)

// box is a store with two users' files, dated.
type box struct {
	st    *store.Store
	dates map[string]time.Time // USER/PATH
	data  map[string]string
}

func newBox(t *testing.T) *box {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	b := &box{st: st, dates: map[string]time.Time{}, data: map[string]string{}}
	when := time.Date(2019, 5, 6, 7, 8, 9, 0, time.UTC)
	for i, f := range []string{"alice/notes.txt", "alice/Photos/2019/beach.jpg", "alice/Photos/2019/sea.jpg", "bob/report.pdf", "bob/é ü/odd name #1.txt"} {
		b.put(t, f, strings.Repeat(f, i*1000+1), when.Add(time.Duration(i)*time.Hour))
	}
	return b
}

func (b *box) put(t *testing.T, f, content string, mtime time.Time) {
	t.Helper()
	user, p, _ := strings.Cut(f, "/")
	tree, err := b.st.Tree(user)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if dir := filepath.Dir(p); dir != "." {
		parts := strings.Split(dir, "/")
		for i := range parts {
			tree.Mkdir(strings.Join(parts[:i+1], "/"))
		}
	}
	u, err := tree.Create(p, false)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(u, content)
	u.SetModTime(mtime)
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	b.dates[f], b.data[f] = mtime, content
}

func (b *box) copier(t *testing.T, target string) *Copier {
	if strings.HasPrefix(target, "/") {
		os.MkdirAll(target, 0o755) // the USB disk's folder, made once
	}
	return &Copier{
		sameDiskOK: true, // the test's folders are all on one disk
		Settings:   copies.Settings{Target: target, Password: "correct horse battery staple", Keep: 1},
		Store:      b.st,
		Users:      func() []string { return []string{"alice", "bob"} },
		Work:       t.TempDir(),
		Log:        slog.New(slog.DiscardHandler),
	}
}

// restored restores the copy st names into a fresh store and checks it
// holds b's files, with their bytes, dates and digests.
func (b *box) restored(t *testing.T, st copies.Settings) {
	t.Helper()
	fresh, err := store.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Restore(context.Background(), st, fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.same(t, fresh)
	if res.Checked != int64(len(b.data)) || len(res.Mismatch) != 0 {
		t.Errorf("digests: %d checked, mismatched %v; want %d checked", res.Checked, res.Mismatch, len(b.data))
	}
}

// same checks that st holds exactly the files of b, with their bytes and dates.
func (b *box) same(t *testing.T, st *store.Store) {
	t.Helper()
	n := 0
	for _, user := range []string{"alice", "bob"} {
		tree, err := st.Tree(user)
		if err != nil {
			t.Fatal(err)
		}
		tree.Walk("/", func(p string, in store.Info) error {
			if in.IsDir() {
				return nil
			}
			f := user + p
			n++
			want, ok := b.data[f]
			if !ok {
				t.Errorf("restored %s, which was not in the store", f)
				return nil
			}
			r, _ := tree.Open(p)
			got, _ := io.ReadAll(r)
			r.Close()
			if string(got) != want {
				t.Errorf("%s: %d bytes, want %d", f, len(got), len(want))
			}
			if !in.ModTime().Equal(b.dates[f]) {
				t.Errorf("%s dated %v, want %v", f, in.ModTime(), b.dates[f])
			}
			return nil
		})
		tree.Close()
	}
	if n != len(b.data) {
		t.Errorf("%d files restored, want %d", n, len(b.data))
	}
}

// A copy to a folder (a USB disk's): encrypted, incremental, what is
// replaced kept for Keep runs, restored with bytes, dates and digests.
func TestCopyAndRestore(t *testing.T) {
	ctx := context.Background()
	b := newBox(t)
	target := filepath.Join(t.TempDir(), "copy")
	c := b.copier(t, target)
	r := c.Run(ctx)
	if r.Err != nil || r.Files < 5 {
		t.Fatalf("first run: %+v", r)
	}
	// Nothing readable on the target: names and contents are encrypted.
	filepath.Walk(target, func(p string, fi os.FileInfo, err error) error {
		// Whole names: an encrypted one (base32hex, 26 or more letters
		// and digits) may hold any short run of letters by chance.
		if name := filepath.Base(p); err == nil && (name == "alice" || name == "beach.jpg" || name == "notes.txt") {
			t.Errorf("a name in clear on the target: %s", p)
		}
		if err == nil && fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			if bytes.Contains(data, []byte("alice/notes.txt")) {
				t.Errorf("content in clear on the target: %s", p)
			}
		}
		return nil
	})
	if st, ok := copies.ReadStatus(c.Work); !ok || st.Files != r.Files || st.Error != "" || st.LastSuccess.IsZero() {
		t.Errorf("the run's outcome kept: %+v, %v", st, ok)
	}
	// Unchanged: nothing sent.
	if r := c.Run(ctx); r.Err != nil || r.Files != 0 {
		t.Errorf("an unchanged run sent %d files: %+v", r.Files, r)
	}
	// A change and a delete: sent, the old bytes moved to old/.
	b.put(t, "alice/notes.txt", "changed", time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))
	bob, _ := b.st.Tree("bob")
	bob.Remove("report.pdf")
	bob.Close()
	delete(b.data, "bob/report.pdf")
	c.now = func() time.Time { return time.Now().Add(time.Second) }
	if r := c.Run(ctx); r.Err != nil || r.Files < 1 {
		t.Fatalf("third run: %+v", r)
	}
	c.now = func() time.Time { return time.Now().Add(2 * time.Second) }
	b.put(t, "alice/notes.txt", "changed again", time.Date(2020, 1, 3, 3, 4, 5, 0, time.UTC))
	if r := c.Run(ctx); r.Err != nil {
		t.Fatalf("fourth run: %+v", r)
	}
	root, _ := configure(c.Settings)
	oldRuns, _ := fs.NewFs(ctx, root+"old")
	if runs, err := oldRuns.List(ctx, ""); err != nil || len(runs) != 1 {
		t.Errorf("%d runs kept in old/ (%v), want Keep = 1", len(runs), err)
	}
	// Restored into a fresh store.
	b.restored(t, c.Settings)
	// A run that fails keeps the last good copy's time.
	good, _ := copies.ReadStatus(c.Work)
	broken := *c
	broken.Settings.Target = "sftp://nobody@127.0.0.1:1/nowhere"
	if r := broken.Run(ctx); r.Err == nil {
		t.Error("a run to an unreachable target succeeded")
	}
	if st, _ := copies.ReadStatus(c.Work); st.Error == "" || !st.LastSuccess.Equal(good.LastSuccess) || !strings.Contains(st.String(), "failed") {
		t.Errorf("after a failed run: %+v (%s)", st, st)
	}
	// The wrong password reads nothing.
	bad := c.Settings
	bad.Password = "wrong"
	empty, err := store.Open(filepath.Join(t.TempDir(), "files"))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := Restore(ctx, bad, empty, nil); err == nil && res.Files > 0 {
		t.Errorf("the wrong password restored %d files", res.Files)
	}
}

// The copy is read on a laptop by the rclone that Debian packages, with the
// commands docs/copies.md gives, and sha1sum checks the files.
func TestReadableWithRclone(t *testing.T) {
	run := laptopRclone(t)
	ctx := context.Background()
	b := newBox(t)
	target := filepath.Join(t.TempDir(), "copy")
	c := b.copier(t, target)
	if r := c.Run(ctx); r.Err != nil {
		t.Fatal(r.Err)
	}
	run("config", "create", "bonesync-copy", "crypt", "remote="+target, "password="+c.Settings.Password,
		"filename_encryption=standard", "directory_name_encryption=true", "--obscure")
	b.readOnLaptop(t, run)
}

// laptopRclone returns a runner of Debian's rclone with a config of its
// own, in a folder of its own (run.dir).
func laptopRclone(t *testing.T) func(args ...string) string {
	t.Helper()
	rclone, err := exec.LookPath("rclone")
	if err != nil {
		t.Skip("rclone is not installed (scripts/test-deps.sh installs it)")
	}
	work := t.TempDir()
	// Not AWS_CA_BUNDLE, which some CI machines set: rclone 1.60's S3 type
	// then fails ("unsupported transport") before any request.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "AWS_CA_BUNDLE=") })
	env = append(env, "RCLONE_CONFIG="+filepath.Join(work, "rclone.conf"))
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(rclone, args...)
		cmd.Env, cmd.Dir = env, work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("rclone %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

// readOnLaptop copies the files and extras out of the remote
// bonesync-copy: with run (laptopRclone), as docs/copies.md says, and
// checks bytes, dates and sha1sum -c against b.
func (b *box) readOnLaptop(t *testing.T, run func(args ...string) string) {
	t.Helper()
	work := t.TempDir()
	run("copy", "bonesync-copy:current/files", filepath.Join(work, "files"))
	run("copy", "bonesync-copy:current/extra", filepath.Join(work, "extra"))
	for f, want := range b.data {
		got, err := os.ReadFile(filepath.Join(work, "files", f))
		if err != nil || string(got) != want {
			t.Errorf("%s from rclone: %v", f, err)
			continue
		}
		if fi, _ := os.Stat(filepath.Join(work, "files", f)); !fi.ModTime().Equal(b.dates[f]) {
			t.Errorf("%s dated %v by rclone, want %v", f, fi.ModTime(), b.dates[f])
		}
	}
	for _, user := range []string{"alice", "bob"} {
		cmd := exec.Command("sha1sum", "-c", filepath.Join(work, "extra", user+".sha1"))
		cmd.Dir = filepath.Join(work, "files", user)
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), ": OK") {
			t.Errorf("sha1sum -c for %s: %v\n%s", user, err, out)
		}
	}
}

// openSSH is OpenSSH's sshd on a free port of 127.0.0.1 for the user
// running the test, taking the key pub (startSSHD: it needs root, for
// sshd's privilege separation, and openssh-server), which a test can cut
// off (every connection dropped, as a power cut of the box drops them) and
// start again.
type openSSH struct {
	t              *testing.T
	bin, cfg, port string
	cmd            *exec.Cmd
	logFile        *os.File
}

func startSSHD(t *testing.T, pub string) *openSSH {
	t.Helper()
	bin, err := exec.LookPath("sshd")
	if err != nil {
		bin = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(bin); err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and OpenSSH's sshd (openssh-server; scripts/install-test-deps.sh installs it)")
	}
	dir := t.TempDir()
	hostKey := filepath.Join(dir, "host_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(pub+"\n"), 0o600)
	os.MkdirAll("/run/sshd", 0o755)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &openSSH{t: t, bin: bin, cfg: filepath.Join(dir, "sshd_config"), port: strconv.Itoa(l.Addr().(*net.TCPAddr).Port)}
	l.Close()
	os.WriteFile(s.cfg, []byte(strings.Join([]string{
		"Port " + s.port, "ListenAddress 127.0.0.1", "HostKey " + hostKey,
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"), "StrictModes no",
		"PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no",
		"PermitRootLogin prohibit-password", "PidFile none", "Subsystem sftp internal-sftp", "",
	}, "\n")), 0o600)
	if s.logFile, err = os.Create(filepath.Join(dir, "sshd.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cut()
		if log, _ := os.ReadFile(s.logFile.Name()); t.Failed() {
			t.Logf("sshd:\n%s", log)
		}
	})
	s.start()
	return s
}

func (s *openSSH) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "-D", "-e", "-f", s.cfg)
	s.cmd.Stderr = s.logFile // a file: Wait need not wait for its connections' processes
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+s.port); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(s.logFile.Name())
	s.t.Fatalf("sshd did not listen:\n%s", log)
}

// cut kills sshd and every process under it (each connection's runs in a
// session of its own): the connections drop with nothing said.
func (s *openSSH) cut() {
	if s.cmd == nil {
		return
	}
	for _, pid := range descendants(s.cmd.Process.Pid) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// descendants are the processes under pid, from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; it ends at the last ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		p, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			parent[p] = pp
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// cutThenComplete runs c, cuts the run short (its context cancelled, as a
// power cut ends it) once the target's folder on disk has entries, then
// runs it again to the end.
func cutThenComplete(t *testing.T, c *Copier, onDisk string) {
	t.Helper()
	ctx := context.Background()
	cut, cancel := context.WithCancel(ctx)
	go func() {
		for cut.Err() == nil {
			if entries, _ := os.ReadDir(onDisk); len(entries) > 0 {
				time.Sleep(20 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	if r := c.Run(cut); r.Err == nil {
		t.Log("the cut run completed before it was cut")
	}
	cancel()
	if r := c.Run(ctx); r.Err != nil {
		t.Fatalf("the run after the cut: %+v", r)
	}
}

// sftpCopier is a copier of b's to OpenSSH's SFTP server on this machine,
// with the box's own key; target is the copy's folder on this disk.
func (b *box) sftpCopier(t *testing.T) (c *Copier, srv *openSSH, target string) {
	t.Helper()
	key := filepath.Join(t.TempDir(), "copies_ed25519")
	pub, err := KeyFile(key)
	if err != nil {
		t.Fatal(err)
	}
	srv = startSSHD(t, pub)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	target = filepath.Join(t.TempDir(), "copy")
	c = b.copier(t, "sftp://"+u.Username+"@127.0.0.1:"+srv.port+target)
	c.Settings.Key = key
	c.Settings.KnownHosts = copies.KnownHosts(c.Work)
	return c, srv, target
}

// A copy to OpenSSH's SFTP server, with the box's own key, and back; a run
// cut short (its context cancelled mid-way, as a power cut ends it) leaves
// a target the next run completes.
func TestCopyToSFTP(t *testing.T) {
	ctx := context.Background()
	b := newBox(t)
	c, srv, target := b.sftpCopier(t)
	port := srv.port

	for i := range 200 { // enough that a run takes a while
		b.put(t, fmt.Sprintf("alice/many/%03d.bin", i), strings.Repeat("x", 20000+i), time.Date(2021, 1, 1, 0, 0, i, 0, time.UTC))
	}
	cutThenComplete(t, c, target)
	b.restored(t, c.Settings)
	// Another host key pinned for the target's address (as if the target's
	// keys were made again since): refused, said so, accepted, copied.
	os.WriteFile(c.Settings.KnownHosts, []byte("[127.0.0.1]:"+port+" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMq0nSqa1X5C5mGN6vkhyZ4Q0vbC0cEavmDH2jpInTdw\n"), 0o600)
	var changed *copies.HostKeyChanged
	if r := c.Run(ctx); !errors.As(r.Err, &changed) {
		t.Fatalf("a run to a target whose host key changed = %v", r.Err)
	}
	if _, err := AcceptHostKey(c.Work, changed.Offered); err != nil {
		t.Fatal(err)
	}
	b.put(t, "alice/after-the-new-key.txt", "sent", time.Now())
	if r := c.Run(ctx); r.Err != nil || r.Files == 0 {
		t.Fatalf("the run after the new key was accepted: %+v", r)
	}
}

// A run writes its progress into status.json as it goes (here slowed by
// the bandwidth limit), and the outcome replaces it at the end.
func TestProgressWhileRunning(t *testing.T) {
	b := newBox(t)
	b.put(t, "alice/big.bin", strings.Repeat("x", 3<<20), time.Now())
	c := b.copier(t, filepath.Join(t.TempDir(), "copy"))
	c.Settings.BwLimit = 1024 // KiB/s: about 3 s for big.bin
	c.every = 50 * time.Millisecond
	done := make(chan Result)
	go func() { done <- c.Run(context.Background()) }()
	var seen []copies.Progress
	for running := true; running; {
		select {
		case r := <-done:
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			running = false
		case <-time.After(100 * time.Millisecond):
			if st, ok := copies.ReadStatus(c.Work); ok && st.Running != nil {
				seen = append(seen, *st.Running)
			}
		}
	}
	if len(seen) < 3 {
		t.Fatalf("progress seen %d times while running", len(seen))
	}
	last := seen[len(seen)-1]
	if last.Checked+last.Files == 0 || seen[0].Started.IsZero() {
		t.Errorf("progress %+v", seen)
	}
	if s := (copies.Status{Running: &last}).String(); !strings.Contains(s, "running since") {
		t.Errorf("a fresh progress reads %q", s)
	}
	old := last
	old.At = time.Now().Add(-time.Hour)
	if s := (copies.Status{Running: &old}).String(); !strings.Contains(s, "cut short") {
		t.Errorf("a stale progress reads %q", s)
	}
	st, _ := copies.ReadStatus(c.Work)
	if st.Running != nil || st.LastSuccess.IsZero() {
		t.Errorf("after the run: %+v", st)
	}
}

// A run asked for while another holds the lock (another process: the
// console's, the server's) is refused and leaves the status alone.
func TestOneRunAtATime(t *testing.T) {
	b := newBox(t)
	c := b.copier(t, filepath.Join(t.TempDir(), "copy"))
	unlock, err := copies.Lock(c.Work)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Run(context.Background()); !errors.Is(r.Err, copies.ErrRunning) {
		t.Fatalf("a second run: %v", r.Err)
	}
	if _, ok := copies.ReadStatus(c.Work); ok {
		t.Error("the refused run wrote a status")
	}
	unlock()
	if r := c.Run(context.Background()); r.Err != nil {
		t.Fatal(r.Err)
	}
}

// A folder target must be there and on another disk than the files: an
// unplugged disk's mount point is refused, not filled.
func TestFolderTargetMustBeAnotherDisk(t *testing.T) {
	b := newBox(t)
	c := b.copier(t, "sftp://x@y/z")
	c.Settings.Target = filepath.Join(t.TempDir(), "not-mounted", "bonesync-copy")
	if r := c.Run(context.Background()); r.Err == nil || !strings.Contains(r.Err.Error(), "is its disk plugged in and mounted?") {
		t.Fatalf("a missing folder: %v", r.Err)
	}
	c.Settings.Target = t.TempDir()
	c.sameDiskOK = false
	if r := c.Run(context.Background()); r.Err == nil || !strings.Contains(r.Err.Error(), "on the same disk as the files") {
		t.Fatalf("a folder on the files' disk: %v", r.Err)
	}
}

// Without a list of users a run copies everyone the store holds, with an
// account or not: a deleted user's files are on the box until the admin
// decides, and so in the copy.
func TestCopiesEveryOwner(t *testing.T) {
	b := newBox(t)
	c := b.copier(t, filepath.Join(t.TempDir(), "copy"))
	c.Users = nil
	r := c.Run(context.Background())
	if r.Err != nil || !slices.Equal(r.Users, []string{"alice", "bob"}) {
		t.Fatalf("copied %v: %v", r.Users, r.Err)
	}
}

// s3Server starts rclone's "serve s3" (scripts/s3server, built here) on a
// free port of 127.0.0.1 with the key pair id and secret, and returns its
// address and the folder it keeps the buckets in.
func s3Server(t *testing.T, id, secret string) (addr, dir string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "s3server")
	build := exec.Command("go", "build", "-o", bin, "./scripts/s3server")
	build.Dir = "../../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the S3 server: %v\n%s", err, out)
	}
	dir = t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "serve", "s3", "--addr", addr, "--auth-key", id+","+secret,
		"--config", filepath.Join(dir, "rclone.conf"), dir)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("S3 server:\n%s", log.String())
		}
	})
	for range 200 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, dir
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the S3 server did not listen")
	return "", ""
}

// A copy to an S3-compatible server (rclone's serve s3, a real one),
// through the MinIO client: a run cut short completes with the next, the
// copy restores with bytes, dates and digests, Debian's rclone reads it on
// a laptop with its own S3 type, and a wrong secret key is refused.
func TestCopyToS3(t *testing.T) {
	ctx := context.Background()
	addr, dir := s3Server(t, "box-key", "box-secret-0123456789")
	b := newBox(t)
	for i := range 120 { // enough that a run takes a while; one over a 5 MiB part
		size := 20000 + i
		if i == 0 {
			size = 6<<20 + 1
		}
		b.put(t, fmt.Sprintf("alice/many/%03d.bin", i), strings.Repeat("y", size), time.Date(2021, 1, 1, 0, 0, i, 0, time.UTC))
	}
	b.put(t, "bob/before 1970.txt", "old", time.Date(1969, 7, 20, 20, 17, 40, 500_000_000, time.UTC))
	c := b.copier(t, "s3+http://box-key@"+addr+"/household/copies")
	c.Settings.TargetPassword = "box-secret-0123456789"

	cutThenComplete(t, c, filepath.Join(dir, "household", "copies"))
	if r := c.Run(ctx); r.Err != nil || r.Files != 0 {
		t.Errorf("an unchanged run sent %d files: %+v", r.Files, r)
	}
	b.restored(t, c.Settings)

	run := laptopRclone(t)
	run("config", "create", "s3-target", "s3", "provider=Other", "endpoint=http://"+addr,
		"access_key_id=box-key", "secret_access_key=box-secret-0123456789")
	run("config", "create", "bonesync-copy", "crypt", "remote=s3-target:household/copies", "password="+c.Settings.Password,
		"filename_encryption=standard", "directory_name_encryption=true", "--obscure")
	b.readOnLaptop(t, run)

	wrong := *c
	wrong.Settings.TargetPassword = "not-the-secret"
	if r := wrong.Run(ctx); r.Err == nil || !strings.Contains(r.Err.Error(), "ignature") {
		t.Errorf("a run with the wrong secret key: %+v", r)
	}
}

// An HTTPS target whose chain the public roots do not vouch for (a store
// at home, a second box) gets its CA pinned at the first run; the public
// roots, kept in a file for a run's client, hold Mozilla's.
func TestPinOnlyWhatThePublicRootsDoNot(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	pin := filepath.Join(t.TempDir(), "target-ca.pem")
	if err := pinCA(strings.TrimPrefix(srv.URL, "https://"), pin); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(pin); err != nil || !bytes.Contains(b, []byte("BEGIN CERTIFICATE")) {
		t.Errorf("the home store's CA not pinned: %v", err)
	}
	roots := filepath.Join(t.TempDir(), "public-roots.pem")
	if err := writePublicRoots(roots); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(roots)
	if n := bytes.Count(b, []byte("BEGIN CERTIFICATE")); n < 100 {
		t.Errorf("%d public roots", n)
	}
}

// A run to an SFTP server whose connection drops mid-file with nothing
// said (the box's power cut: rclone cannot remove its partial upload)
// leaves that partial object on the target; the next run sends the same
// file under the same partial name. It completes with no error, leaves no
// partial object, says it completed an interrupted run, and the copy
// restores whole.
func TestSFTPRunAfterACut(t *testing.T) {
	ctx := context.Background()
	b := newBox(t)
	c, srv, target := b.sftpCopier(t)
	c.Settings.BwLimit = 256 // KiB/s: the big file takes seconds
	big := make([]byte, 3<<20)
	rand.NewChaCha8([32]byte{1}).Read(big)
	b.put(t, "alice/big.bin", string(big), time.Date(2022, 2, 2, 2, 2, 2, 0, time.UTC))

	done := make(chan Result, 1)
	cut, stop := context.WithCancel(ctx)
	defer stop()
	go func() { done <- c.Run(cut) }()
	// The big file on its way: a file on the target's disk past 256 KiB.
	partial := ""
	for i := 0; i < 600 && partial == ""; i++ {
		filepath.WalkDir(target, func(p string, d os.DirEntry, err error) error {
			if fi, e := os.Stat(p); err == nil && e == nil && fi.Mode().IsRegular() && fi.Size() > 256<<10 && fi.Size() < int64(len(big)) {
				partial = p
			}
			return nil
		})
		time.Sleep(50 * time.Millisecond)
	}
	if partial == "" {
		t.Fatal("the big file never showed on the target while it was sent")
	}
	// The power goes: the connections drop with nothing said, and the
	// run ends (without the box, nothing retries them); its status is as
	// it was writing it (a power cut lets it write no outcome).
	asCut, err := os.ReadFile(filepath.Join(c.Work, "status.json"))
	if err != nil || !strings.Contains(string(asCut), `"running"`) {
		t.Fatalf("no progress in the status while the run went on (%v): %s", err, asCut)
	}
	srv.cut()
	stop()
	if r := <-done; r.Err == nil {
		t.Fatalf("the cut run succeeded: %+v", r)
	}
	os.WriteFile(filepath.Join(c.Work, "status.json"), asCut, 0o600)
	if _, err := os.Stat(partial); err != nil {
		t.Fatalf("the cut left no partial upload (%v): this test's premise is gone", err)
	}
	srv.start()
	c.Settings.BwLimit = 0
	r := c.Run(ctx)
	if r.Err != nil || r.Errors != 0 {
		t.Fatalf("the run after the cut: %d errors, %v", r.Errors, r.Err)
	}
	if _, err := os.Stat(partial); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the partial upload is still on the target (%v)", err)
	}
	st, _ := copies.ReadStatus(c.Work)
	if !strings.Contains(st.String(), "completed at") || !strings.Contains(st.String(), "after an interrupted run") {
		t.Errorf("status after the run that completed a cut one: %s", st)
	}
	b.restored(t, c.Settings)
	// The run after that one is an ordinary one.
	if r := c.Run(ctx); r.Err != nil {
		t.Fatal(r.Err)
	}
	if st, _ := copies.ReadStatus(c.Work); strings.Contains(st.String(), "interrupted") {
		t.Errorf("status of an ordinary run: %s", st)
	}
}

//go:build vm

package main

// The update test: the image `make image` wrote, booted through U-Boot in
// QEMU with reboots allowed, updated over HTTPS to another build, then to
// two broken ones (a server that exits at start, a PID 1 that panics),
// each time coming back by itself, and a power cut in the middle of an
// update (make test-boot).

import (
	"archive/tar"
	"bytes"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/update"
)

// buildBundle builds bonesync for the board (with extra go build args) or
// the program in pkg, and the update bundle around it, as version.
func buildBundle(dir, version, pkg string, goArgs ...string) (string, error) {
	bin := filepath.Join(dir, "init")
	ld := "-s -w -X main.Version=" + version
	if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
		ld += " -X github.com/bonesync/bonesync/appliance/clock.BuildUnix=" + e
	}
	args := append([]string{"build", "-trimpath", "-ldflags", ld, "-o", bin}, goArgs...)
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm", "GOARM=7", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	err := run([]string{"-cache", "../out/cache", "-lock", "../scripts/boot-packages.lock", "-binary", bin,
		"-out", dir, "-name", "u", "-version", version, "-update-only", "-sign-key", signingKey(os.Getenv("BONESYNC_IMAGE"))}, io.Discard)
	if err != nil {
		return "", fmt.Errorf("bundle %s: %v", version, err)
	}
	return filepath.Join(dir, "u.update"), nil
}

// resign writes bundle's files again as a bundle signed by another key,
// which the box has never heard of.
func resign(t *testing.T, bundle string) string {
	f, err := os.Open(bundle)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	files := map[string]string{}
	var m *update.Manifest
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == update.ManifestName {
			m = new(update.Manifest)
			json.NewDecoder(tr).Decode(m)
			continue
		}
		p := filepath.Join(dir, strings.ReplaceAll(h.Name, "/", "_"))
		b, _ := io.ReadAll(tr)
		os.WriteFile(p, b, 0o644)
		files[h.Name] = p
	}
	_, other, _ := ed25519.GenerateKey(nil)
	out := filepath.Join(dir, "other.update")
	w, _ := os.Create(out)
	defer w.Close()
	if err := update.WriteBundle(w, m.Version, m.Boards, files, time.Unix(0, 0), other); err != nil {
		t.Fatal(err)
	}
	return out
}

// client is an HTTPS client that trusts the box's CA, as localhost.
func (v *vm) client() (*http.Client, error) {
	resp, err := http.Get("http://127.0.0.1:" + v.http + "/ca.crt")
	if err != nil {
		return nil, err
	}
	ca, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	return &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}}}, nil
}

func (v *vm) url(path string) string { return "https://127.0.0.1:" + v.https + path }

// upload PUTs a bundle to /admin/update as curl -T would.
func (v *vm) upload(password, bundle string) (int, string) {
	f, err := os.Open(bundle)
	if err != nil {
		return 0, err.Error()
	}
	defer f.Close()
	req, _ := http.NewRequest("PUT", v.url("/admin/update"), f)
	req.SetBasicAuth("admin", password)
	c, err := v.client()
	if err != nil {
		return 0, err.Error()
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type boxStatus struct {
	Version string
	System  update.Status
}

func (v *vm) statusJSON(t *testing.T, password string) boxStatus {
	t.Helper()
	req, _ := http.NewRequest("GET", v.url("/status.json"), nil)
	req.SetBasicAuth("admin", password)
	c, err := v.client()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st boxStatus
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /status.json: %d %v", resp.StatusCode, err)
	}
	return st
}

func TestUpdate(t *testing.T) {
	t.Parallel()
	img := builtImage(t)
	start := time.Now()
	versionA := update.ParseEnv(bootFile(t, img, "slot-a/slot.env"))["bonesync_version"]
	if versionA == "" {
		t.Fatal("the image's slot a names no version")
	}
	versionB := versionA + ".b"
	// The bundles are built while the first boot runs.
	var bundles struct {
		sync.WaitGroup
		good, failServe, panicInit string
		err                        error
	}
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	bundles.Add(1)
	go func() {
		defer bundles.Done()
		if bundles.good, bundles.err = buildBundle(dirs[0], versionB, "./appliance"); bundles.err != nil {
			return
		}
		if bundles.failServe, bundles.err = buildBundle(dirs[1], versionA+".failserve", "./image/testdata/failserve"); bundles.err != nil {
			return
		}
		bundles.panicInit, bundles.err = buildBundle(dirs[2], versionA+".panicinit", "./image/testdata/panicinit")
	}()

	card := flashCard(t, img)
	// The owner sets admin's password in bonesync.conf on the FAT before
	// the first boot, from any computer (mtools here).
	const password = "set before the first boot #1"
	fat := card + "@@" + fmt.Sprint(partStart*512)
	conf, err := exec.Command("mtype", "-i", fat, "::/bonesync.conf").Output()
	if err != nil {
		t.Fatal(err)
	}
	conf = append(conf, "admin_password = \""+password+"\"\r\n"...)
	confFile := filepath.Join(t.TempDir(), "bonesync.conf")
	os.WriteFile(confFile, conf, 0o644)
	if out, err := exec.Command("mcopy", "-o", "-i", fat, confFile, "::/bonesync.conf").CombinedOutput(); err != nil {
		t.Fatalf("mcopy: %v %s", err, out)
	}
	v := startVM(t, card, true)
	// The power is cut as the box blanks the password in the file (a
	// write to the FAT partition): it boots all the same.
	v.waitFor(t, `admin's password set from admin_password`, 10*time.Minute)
	v.cmd.Process.Kill()
	<-v.done
	v = startVMWith(t, card, vmOptions{reboots: true, monitor: true})
	v.waitFor(t, `serving HTTPS`, 10*time.Minute)
	if strings.Contains(v.log.String(), "FIRST-LOGIN.txt") {
		t.Error("with admin_password set, the box wrote FIRST-LOGIN.txt")
	}
	ca, _ := v.served(t)
	// That password logs in over WebDAV (and over SFTP below).
	if c, err := v.client(); err == nil {
		req, _ := http.NewRequest("PROPFIND", v.url("/dav/"), nil)
		req.SetBasicAuth("admin", password)
		req.Header.Set("Depth", "0")
		if resp, err := c.Do(req); err != nil || resp.StatusCode != 207 {
			t.Errorf("WebDAV with the password from bonesync.conf: %v %v", err, resp)
		} else {
			resp.Body.Close()
		}
	}
	note := filepath.Join(t.TempDir(), "note.txt")
	os.WriteFile(note, []byte("kept across updates\n"), 0o644)
	if out, err := v.sftp(t, password, "put "+note+" note.txt"); err != nil {
		t.Fatalf("sftp put: %v\n%s", err, out)
	}
	if st := v.statusJSON(t, password); st.Version != versionA || st.System.Slot != "a" || st.System.Trial {
		t.Errorf("before the update, /status.json = %+v", st)
	}
	bundles.Wait()
	if bundles.err != nil {
		t.Fatal(bundles.err)
	}

	// The same files signed by a key the box does not trust: refused
	// before anything is written, slot b still holds version A.
	if code, body := v.upload(password, resign(t, bundles.good)); code != 400 || !strings.Contains(body, "which this box does not trust") || !strings.Contains(body, "nothing changed") {
		t.Errorf("a bundle signed by another key: PUT /admin/update = %d:\n%s", code, body)
	}
	if st := v.statusJSON(t, password); st.System.OtherVersion != versionA || st.System.Default != "a" {
		t.Errorf("after a refused bundle, /status.json = %+v", st)
	}

	// Version B over HTTPS: it runs from slot b on trial, serves, and
	// becomes the default; the CA and the files are kept.
	mark := len(v.log.String())
	if code, body := v.upload(password, bundles.good); code != 200 || !strings.Contains(body, "reboots now into version "+versionB) {
		t.Fatalf("PUT /admin/update = %d:\n%s", code, body)
	}
	v.waitAfter(t, mark, `bonesync: slot b on trial, once`, 3*time.Minute)
	v.waitAfter(t, mark, `bonesync: running version=`+regexp.QuoteMeta(versionB)+` slot=b\r?\n`, 3*time.Minute)
	v.waitAfter(t, mark, `its slot is now the default version=\S+ slot=b`, 5*time.Minute)
	st := v.statusJSON(t, password)
	if st.Version != versionB || st.System.Slot != "b" || st.System.Default != "b" || st.System.OtherVersion != versionA {
		t.Errorf("after the update, /status.json = %+v", st)
	}
	ca2, _ := v.served(t)
	if !bytes.Equal(ca, ca2) {
		t.Error("the update made a new CA")
	}
	back := filepath.Join(t.TempDir(), "back.txt")
	if out, err := v.sftp(t, password, "get note.txt "+back); err != nil {
		t.Fatalf("sftp get after the update: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(back); string(got) != "kept across updates\n" {
		t.Errorf("the file after the update = %q", got)
	}
	t.Logf("update to B served %v after the upload began", time.Since(start).Round(time.Second))

	// Broken updates: each is tried once and the box comes back to B.
	for _, broken := range []struct{ name, bundle, sign string }{
		{"a server that exits at start", bundles.failServe, `did not serve: rebooting into the previous version version=\S+ why=its server exited with status 1 \(3 times\)`},
		{"a PID 1 that panics", bundles.panicInit, `Kernel panic - not syncing: Attempted to kill init`},
	} {
		t0 := time.Now()
		mark := len(v.log.String())
		if code, body := v.upload(password, broken.bundle); code != 200 {
			t.Fatalf("%s: PUT /admin/update = %d:\n%s", broken.name, code, body)
		}
		v.waitAfter(t, mark, `bonesync: slot a on trial, once`, 3*time.Minute)
		v.waitAfter(t, mark, broken.sign, 5*time.Minute)
		v.waitAfter(t, mark, `(?s)`+broken.sign+`.*bonesync: running version=`+regexp.QuoteMeta(versionB)+` slot=b\r?\n`, 5*time.Minute)
		v.waitAfter(t, mark, `(?s)`+broken.sign+`.*the update did not start; the box came back to this version by itself update=version \S+ \(slot a\)`, 5*time.Minute)
		v.waitAfter(t, mark, `(?s)`+broken.sign+`.*serving HTTPS`, 5*time.Minute)
		if st := v.statusJSON(t, password); st.Version != versionB || st.System.Slot != "b" || st.System.Default != "b" || st.System.FailedTrial == "" {
			t.Errorf("after %s, /status.json = %+v", broken.name, st)
		}
		t.Logf("%s: back on B %v after the upload", broken.name, time.Since(t0).Round(time.Second))
	}

	// A power cut in the middle of an update: the box boots B. The
	// bundle is received whole and checked before the slot is written;
	// the card's writes are slowed to 1 MB/s so that the cut lands while
	// the slot is being written, however fast this machine is.
	if out := v.monitor(t, "block_set_io_throttle sd 0 0 1000000 0 0 0"); strings.Contains(out, "rror") {
		t.Fatalf("QEMU monitor: %s", out)
	}
	mark = len(v.log.String())
	go v.upload(password, bundles.good)
	// The slot is marked unbootable (on the card, synced) before its
	// first file is written: the cut comes after that, by the line the
	// box prints then, not by a time that a loaded machine can outrun.
	v.waitAfter(t, mark, `update: writing slot a`, 3*time.Minute)
	time.Sleep(2 * time.Second) // the slot is being written, at 1 MB/s
	v.cmd.Process.Kill()
	<-v.done
	// The box never writes the FAT's tables or directories: still clean.
	checkFAT(t, card, "after a power cut in the middle of an update")
	v = startVM(t, card, true)
	v.waitFor(t, `bonesync: running version=`+regexp.QuoteMeta(versionB)+` slot=b\r?\n`, 3*time.Minute)
	v.waitFor(t, `serving HTTPS`, 5*time.Minute)
	v.waitFor(t, `the other slot holds no bootable system: an update into it did not finish \(nothing else changed\) other=a`, time.Minute)
	if st := v.statusJSON(t, password); st.Version != versionB || st.System.OtherVersion != "" || !st.System.OtherIncomplete {
		t.Errorf("after a power cut mid-update, /status.json = %+v (slot a half-written must not count as bootable)", st)
	}
	v.poweroff(t)
	// The password was blanked in place: same size, not readable.
	checkFAT(t, card, "after the update test")
	after, err := exec.Command("mtype", "-i", fat, "::/bonesync.conf").Output()
	if err != nil || len(after) != len(conf) || bytes.Contains(after, []byte(password)) || !bytes.Contains(after, []byte("admin_password =        ")) {
		t.Errorf("bonesync.conf after the first start (%v, %d bytes, was %d):\n%s", err, len(after), len(conf), after[max(0, len(after)-200):])
	}
	t.Logf("whole update test %v", time.Since(start).Round(time.Second))
}

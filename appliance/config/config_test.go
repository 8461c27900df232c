package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	in := `# comment
hostname = nas   # trailing comment
tls_key = ecdsa-p384
target_ms=250
concurrency = "4"
post_quantum = OFF
usb_device = Console, drive
`
	c, probs := Parse("f.conf", strings.NewReader(in))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	want := Default()
	want.Hostname, want.TLSKey, want.Target, want.Concurrency, want.PostQuantum = "nas", "ecdsa-p384", 250*time.Millisecond, 4, "off"
	want.USB = USBFunctions{Console: true, Drive: true}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse = %+v, want %+v", c, want)
	}
}

func TestProblemsKeepDefaults(t *testing.T) {
	in := "hostnme = x\ntls_key = rsa-1024\nconcurrency = lots\njust words\ntarget_ms = 0\nssh_host_key = ecdsa-p384\nbench_budget = 1s\nusb_device = console, wifi\n"
	c, probs := Parse("bonesync.conf", strings.NewReader(in))
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("config = %+v, want defaults", c)
	}
	wantLines := []string{
		`bonesync.conf:1: unknown setting "hostnme" (did you mean "hostname"?)`,
		"bonesync.conf:2: tls_key: rsa-1024 gives 80-bit security",
		"bonesync.conf:3: concurrency:",
		"bonesync.conf:4:",
		"bonesync.conf:5: target_ms:",
		"bonesync.conf:6: ssh_host_key:",
		"bonesync.conf:7: bench_budget:",
		`bonesync.conf:8: usb_device: "wifi" is not network, console, drive or none`,
	}
	if len(probs) != len(wantLines) {
		t.Fatalf("got %d problems %v, want %d", len(probs), probs, len(wantLines))
	}
	for i, p := range probs {
		if !strings.HasPrefix(p.String(), wantLines[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, p, wantLines[i])
		}
	}
}

func TestExampleParsesToDefaults(t *testing.T) {
	ex := Example()
	c, probs := Parse("example", strings.NewReader(ex))
	if len(probs) != 0 || !reflect.DeepEqual(c, Default()) {
		t.Errorf("Example parses to %+v, %v; want defaults", c, probs)
	}
	// Uncommenting every setting must also give the defaults: the example
	// documents them truthfully.
	var un []string
	for _, l := range strings.Split(ex, "\n") {
		if strings.HasPrefix(l, "#") && strings.Contains(l, " = ") && !strings.HasPrefix(l, "# ") {
			un = append(un, strings.TrimPrefix(l, "#"))
		}
	}
	if len(un) != len(settings) {
		t.Fatalf("example has %d settings, want %d", len(un), len(settings))
	}
	c, probs = Parse("uncommented", strings.NewReader(strings.Join(un, "\n")))
	if len(probs) != 0 || !reflect.DeepEqual(c, Default()) {
		t.Errorf("uncommented example = %+v, %v; want defaults", c, probs)
	}
}

func TestLoadMissingIsDefault(t *testing.T) {
	c, probs := Load(filepath.Join(t.TempDir(), "none.conf"))
	if len(probs) != 0 || !reflect.DeepEqual(c, Default()) {
		t.Errorf("Load(missing) = %+v, %v", c, probs)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c"), []byte("concurrency = 2\n"), 0o644)
	if c, _ := Load(filepath.Join(dir, "c")); c.Concurrency != 2 {
		t.Errorf("Load: concurrency = %d, want 2", c.Concurrency)
	}
}

func TestSSHAlgorithms(t *testing.T) {
	c, probs := Parse("f", strings.NewReader("ssh_ciphers = chacha20-poly1305@openssh.com, aes256-gcm@openssh.com\nssh_macs = hmac-sha1\nssh_kex =\n"))
	if want := []string{"chacha20-poly1305@openssh.com", "aes256-gcm@openssh.com"}; !reflect.DeepEqual(c.SSHCiphers, want) {
		t.Errorf("SSHCiphers = %v, want %v", c.SSHCiphers, want)
	}
	if len(probs) != 1 || !strings.HasPrefix(probs[0].String(), `f:2: ssh_macs: "hmac-sha1" is refused: it uses SHA-1`) {
		t.Errorf("problems = %v, want one for hmac-sha1 at line 2", probs)
	}
	if c.SSHMACs != nil || c.SSHKeyExchanges != nil {
		t.Errorf("a refused or empty list must leave the default (nil): %v %v", c.SSHMACs, c.SSHKeyExchanges)
	}
}

func TestTrash(t *testing.T) {
	c, probs := Parse("f", strings.NewReader("trash_days = 0\ntrash_reserve_mb = 256\n"))
	if len(probs) != 0 || c.TrashDays != 0 || c.TrashReserveMB != 256 {
		t.Errorf("trash_days = 0, trash_reserve_mb = 256: got %d, %d, %v", c.TrashDays, c.TrashReserveMB, probs)
	}
	c, probs = Parse("f", strings.NewReader("trash_days = -1\ntrash_reserve_mb = 1G\n"))
	if len(probs) != 2 || c.TrashDays != 30 || c.TrashReserveMB != 1024 {
		t.Errorf("bad trash settings: got %d, %d, %v; want the defaults and two problems", c.TrashDays, c.TrashReserveMB, probs)
	}
}

func TestExampleFitsTheConsole(t *testing.T) {
	for i, l := range strings.Split(Example(), "\n") {
		if len(l) > 80 {
			t.Errorf("Example() line %d is %d characters: %s", i+1, len(l), l)
		}
	}
}

func TestBlank(t *testing.T) {
	raw := []byte("hostname = box\n admin_password = \"s3cret # not a comment\" # the owner's\r\n#admin_password = old\nadmin_ssh_key = ssh-ed25519 AAAA\n")
	out, ok := Blank(raw, "admin_password")
	if !ok || len(out) != len(raw) {
		t.Fatalf("Blank: %v, %d bytes for %d", ok, len(out), len(raw))
	}
	if strings.Contains(string(out), "s3cret") || !strings.Contains(string(out), "\r\n#admin_password = old\n") || strings.Contains(string(out), "owner") {
		t.Errorf("blanked:\n%q", out)
	}
	c, probs := Parse("x", bytes.NewReader(out))
	if c.AdminPassword != "" || c.Hostname != "box" || len(probs) != 1 { // the key line is not a valid key
		t.Errorf("the blanked file parses as %q, %v", c.AdminPassword, probs)
	}
	c, _ = Parse("x", bytes.NewReader(raw))
	if c.AdminPassword != "s3cret # not a comment" {
		t.Errorf("a quoted # cut the password: %q", c.AdminPassword)
	}
	// An unquoted # cut the password; the rest must go too.
	cut, _ := Blank([]byte("admin_password = hunter2#secretpart\n"), "admin_password")
	if strings.Contains(string(cut), "secret") || strings.Contains(string(cut), "hunter") {
		t.Errorf("blanked: %q", cut)
	}
	// A lone apostrophe elsewhere does not swallow a comment.
	c, _ = Parse("x", strings.NewReader("hostname = bobs-box # bob's\n"))
	if c.Hostname != "bobs-box" {
		t.Errorf("hostname = %q", c.Hostname)
	}
	if _, ok := Blank(out, "admin_password"); ok {
		t.Error("a blank value was blanked again")
	}
}

// The admin page's copy settings over the file's: only copy_* taken, a
// value with a # or quotes written so that it reads back the same.
func TestOverlayTakesCopySettingsOnly(t *testing.T) {
	base, _ := Parse("bonesync.conf", strings.NewReader("hostname = box\ncopy_target = /media/usb/old\ncopy_keep = 3\n"))
	var b strings.Builder
	for _, kv := range [][2]string{{"copy_target", "sftp://me@nas/backups"}, {"copy_target_password", `pa#ss "word"`}, {"copy_at", "01:15"}} {
		line, err := Line(kv[0], kv[1])
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(line)
	}
	b.WriteString("hostname = other\n")
	path := filepath.Join(t.TempDir(), "settings.conf")
	os.WriteFile(path, []byte(b.String()), 0o600)
	c, probs := Overlay(base, path, "copy_")
	if c.CopyTarget != "sftp://me@nas/backups" || c.CopyTargetPassword != `pa#ss "word"` || c.CopyAt != 75*time.Minute || c.CopyKeep != 3 {
		t.Errorf("overlaid: %q %q %v keep %d", c.CopyTarget, c.CopyTargetPassword, c.CopyAt, c.CopyKeep)
	}
	if c.Hostname != "box" || len(probs) != 1 || !strings.Contains(probs[0].Msg, "hostname is not set here") {
		t.Errorf("hostname %q, problems %v", c.Hostname, probs)
	}
	if c, probs := Overlay(base, filepath.Join(t.TempDir(), "none"), "copy_"); c.CopyTarget != "/media/usb/old" || probs != nil {
		t.Errorf("a missing overlay changed %q %v", c.CopyTarget, probs)
	}
	if _, err := Line("copy_target", "a\nb"); err == nil {
		t.Error("a value on two lines was written")
	}
}

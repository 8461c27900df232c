package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/appliance/sysd"
)

// server is one server under test, started by this program and stopped by
// its own process id.
type server struct {
	name string
	addr string // the address measured (HTTPS or SSH)
	cmd  *exec.Cmd
	// keep is how many long-lived child processes the server has (nginx's
	// workers); more than that means connections are still being served.
	keep int
	done chan struct{} // closed when cmd has exited
	logs []string      // files worth showing when something fails
	// within is how long it may take to serve (0: 30 s; more under
	// emulation).
	within time.Duration
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// start runs cmd and waits until ready says the server serves.
func start(ctx context.Context, s *server, ready func() error) error {
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.name, err)
	}
	s.done = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.done) }()
	within := s.within
	if within == 0 {
		within = 30 * time.Second
	}
	deadline := time.Now().Add(within)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("%s exited at start: %v%s", s.name, s.cmd.ProcessState, s.tail())
		case <-ctx.Done():
			s.stop()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return fmt.Errorf("%s not serving after %v: %v%s", s.name, within, err, s.tail())
		}
	}
}

// stop ends the server (SIGTERM, then SIGKILL after 10 s) and waits for it.
func (s *server) stop() {
	if s.cmd.Process == nil || s.done == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// tail is the end of the server's log files, for error messages.
func (s *server) tail() string {
	var b strings.Builder
	for _, f := range s.logs {
		data, err := os.ReadFile(f)
		if err != nil || len(data) == 0 {
			continue
		}
		if len(data) > 1500 {
			data = data[len(data)-1500:]
		}
		fmt.Fprintf(&b, "\n--- %s:\n%s", f, data)
	}
	return b.String()
}

// freePort returns a loopback port that was free a moment ago. The high
// ports of other users of this machine are left alone: the kernel picks.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func dialable(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// nginxTLSConf is the nginx configuration: two workers, TLS 1.2 and 1.3,
// X25519 only, session tickets on, one small static file. Access logging is
// off, since bonesync keeps no access log either.
const nginxTLSConf = `worker_processes %[1]d;
%[2]s
pid %[3]s/nginx.pid;
error_log %[3]s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    default_type application/octet-stream;
    client_body_temp_path %[3]s/tmp/body;
    proxy_temp_path %[3]s/tmp/proxy;
    fastcgi_temp_path %[3]s/tmp/fastcgi;
    uwsgi_temp_path %[3]s/tmp/uwsgi;
    scgi_temp_path %[3]s/tmp/scgi;
    server {
        listen 127.0.0.1:%[4]d ssl%[7]s;
        ssl_certificate %[5]s;
        ssl_certificate_key %[6]s;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ecdh_curve X25519;
        ssl_session_tickets on;
        root %[3]s/www;
        location = /ca.crt { default_type application/x-x509-ca-cert; }
        location /dav/ { auth_basic "bench"; auth_basic_user_file %[3]s/htpasswd; }
    }
}
`

// writeNginx prepares dir for nginx: the config, its temp dirs and the file
// it serves (www/ca.crt). It returns the config file.
func writeNginx(dir string, workers int, extra string, port int, chain, key string, file []byte) (string, error) {
	return writeNginxListen(dir, workers, extra, "", port, chain, key, file)
}

// writeNginxListen is writeNginx with listen's further parameters
// (" http2").
func writeNginxListen(dir string, workers int, extra, listen string, port int, chain, key string, file []byte) (string, error) {
	for _, d := range []string{"www", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return "", err
		}
	}
	// The workers run as nobody and must reach the file.
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "www", "ca.crt"), file, 0o644); err != nil {
		return "", err
	}
	// For the abuse phase's password guesses: admin's SHA-512-crypt hash
	// (openssl passwd -6), which no guess matches.
	if err := os.WriteFile(filepath.Join(dir, "htpasswd"), []byte(htpasswd), 0o644); err != nil {
		return "", err
	}
	conf := filepath.Join(dir, "nginx.conf")
	text := fmt.Sprintf(nginxTLSConf, workers, extra, dir, port, chain, key, listen)
	return conf, os.WriteFile(conf, []byte(text), 0o644)
}

const htpasswd = "admin:$6$benchsalt$q9MuV9hhfkGoXDS1AtvptzAA/r/DjSa7mIywLZFUe.UNsSK1b2j0LHSWWb4kMOM/W0qWeW4vyTY5T17yMWHcE1\n"

// startNginx runs Debian's nginx in the foreground on a free port.
func startNginx(ctx context.Context, dir, chain, key string, file []byte) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf, err := writeNginx(dir, 2, "", port, chain, key, file)
	if err != nil {
		return nil, err
	}
	s := &server{name: "nginx", addr: fmt.Sprintf("127.0.0.1:%d", port), keep: 2,
		logs: []string{filepath.Join(dir, "error.log"), filepath.Join(dir, "stderr.log")}}
	s.cmd = exec.Command("/usr/sbin/nginx", "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"), "-g", "daemon off;")
	if s.cmd.Stderr, err = os.Create(filepath.Join(dir, "stderr.log")); err != nil {
		return nil, err
	}
	err = start(ctx, s, func() error {
		if err := dialable(s.addr); err != nil {
			return err
		}
		if n := len(tree(s.pid())) - 1; n < 2 {
			return fmt.Errorf("%d workers", n)
		}
		return nil
	})
	return s, err
}

// sshdConf is sshd's configuration: the ed25519 host key, curve25519-sha256
// only, public keys checked against authorized_keys (empty on this machine,
// where the SSH block's keys are refused; the ARM count's user key under
// qemu-arm), passwords (for the abuse phase's guesses), and SFTP served
// inside sshd (internal-sftp: qemu-arm cannot execute Debian's ARM
// sftp-server, and in-process it costs one exec less than Debian's default).
const sshdConf = `ListenAddress 127.0.0.1
HostKey %s
KexAlgorithms curve25519-sha256
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PidFile %s
MaxStartups 64
Subsystem sftp internal-sftp
`

// startSSHD runs OpenSSH's sshd in the foreground on a free port. sshd
// forks (and re-executes itself) for every connection.
func startSSHD(ctx context.Context, dir string, hostKey []byte) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf, err := writeSSHD(dir, hostKey, nil)
	if err != nil {
		return nil, err
	}
	log := filepath.Join(dir, "sshd.log")
	s := &server{name: "sshd", addr: fmt.Sprintf("127.0.0.1:%d", port), logs: []string{log}}
	s.cmd = exec.Command("/usr/sbin/sshd", "-D", "-f", conf, "-p", strconv.Itoa(port), "-E", log)
	err = start(ctx, s, func() error { return dialable(s.addr) })
	return s, err
}

// writeSSHD writes sshd's host key, authorized_keys and sshdConf into dir
// and returns the configuration's path. It also makes sure of sshd's
// privilege separation directory.
func writeSSHD(dir string, hostKey, authorized []byte) (string, error) {
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return "", err
	}
	keyFile := filepath.Join(dir, "ssh_host_ed25519_key")
	if err := os.WriteFile(keyFile, hostKey, 0o600); err != nil {
		return "", err
	}
	auth := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(auth, authorized, 0o644); err != nil { // read as the user logging in
		return "", err
	}
	conf := filepath.Join(dir, "sshd_config")
	text := fmt.Sprintf(sshdConf, keyFile, auth, filepath.Join(dir, "sshd.pid"))
	return conf, os.WriteFile(conf, []byte(text), 0o644)
}

// bonesyncConf pins the keys compared and turns the post-quantum hybrid
// off, so both sides do X25519 with the same key. The budget only shortens
// the benchmark of the first start: with the keys pinned its result is not
// used.
const bonesyncConf = `tls_key = %s
ssh_host_key = ed25519
post_quantum = off
bench_budget = 10s
`

// prepareBonesync makes a state directory for key: the benchmark keys as
// tls.key and ssh_host.key (so bonesync serves the very keys nginx and sshd
// get), the config, and a first `bonesync bench`, so that `bonesync serve`
// later starts at once and its memory figures do not include the benchmark.
func prepareBonesync(ctx context.Context, bin, dir, key string, tlsKey, sshKey []byte) error {
	st := filepath.Join(dir, "state")
	if err := os.MkdirAll(st, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(st, "tls.key"), tlsKey, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(st, "ssh_host.key"), sshKey, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bonesync.conf"), []byte(fmt.Sprintf(bonesyncConf, key)), 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, "bench", "-state", st, "-config", filepath.Join(dir, "bonesync.conf"))
	out, err := cmd.CombinedOutput()
	os.WriteFile(filepath.Join(dir, "prepare.log"), out, 0o644)
	if err != nil {
		return fmt.Errorf("bonesync bench for %s: %w\n%s", key, err, out)
	}
	// The keys must have been kept, not replaced.
	for f, want := range map[string][]byte{"tls.key": tlsKey, "ssh_host.key": sshKey} {
		got, err := os.ReadFile(filepath.Join(st, f))
		if err != nil || string(got) != string(want) {
			return fmt.Errorf("bonesync replaced the benchmark key %s in %s", f, st)
		}
	}
	return nil
}

// startBonesync runs `bonesync serve` on ports the kernel picks. It learns
// them as bonesync's PID 1 learns its server's state: by sd_notify, from
// the READY=1 message and its addresses (sysd.Ready), never from a log
// line; the measurement starts after it. It returns the server with its
// HTTPS address, and its SFTP address.
func startBonesync(ctx context.Context, bin, dir string) (*server, string, error) {
	return startServe(ctx, dir, []string{bin}, nil, 0)
}

// startServe is startBonesync for the command line argv (the binary,
// or an emulator and its flags, then the binary), with env added, given
// within to serve (0: 30 s).
func startServe(ctx context.Context, dir string, argv, env []string, within time.Duration) (*server, string, error) {
	stderrLog := filepath.Join(dir, "serve.stderr")
	s := &server{name: "bonesync", logs: []string{stderrLog}, within: within}
	args := append(argv[1:len(argv):len(argv)], "serve", "-state", filepath.Join(dir, "state"), "-config", filepath.Join(dir, "bonesync.conf"),
		"-https", "127.0.0.1:0", "-http", "127.0.0.1:0", "-ssh", "127.0.0.1:0")
	s.cmd = exec.Command(argv[0], args...)
	mgr, err := sysd.Manage(filepath.Join(dir, "notify"))
	if err != nil {
		return nil, "", err
	}
	s.cmd.Env = append(append(os.Environ(), env...), mgr.Env(0)...)
	if s.cmd.Stdout, err = os.Create(filepath.Join(dir, "serve.stdout")); err != nil {
		mgr.Close()
		return nil, "", err
	}
	if s.cmd.Stderr, err = os.Create(stderrLog); err != nil {
		mgr.Close()
		return nil, "", err
	}
	ready := make(chan map[string]string, 1)
	go func() {
		defer mgr.Close()
		for {
			msg, err := mgr.Read()
			if err != nil {
				return
			}
			if msg.Ready {
				ready <- msg.Listening
				return
			}
		}
	}()
	var got map[string]string
	err = start(ctx, s, func() error {
		if got == nil {
			select {
			case got = <-ready:
			default:
				return errors.New("no READY=1 yet")
			}
		}
		return dialable(got["https"])
	})
	if err != nil {
		mgr.Close()
		return nil, "", err
	}
	s.addr = got["https"]
	return s, got["ssh"], nil
}

// startBonesyncOn runs `bonesync serve` on free ports chosen here, ready
// when its HTTPS port accepts: for a baseline build from before READY=1
// carried the addresses.
func startBonesyncOn(ctx context.Context, bin, dir string) (*server, error) {
	var ports [3]int
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	addr := func(p int) string { return fmt.Sprintf("127.0.0.1:%d", p) }
	stderrLog := filepath.Join(dir, "serve-baseline.stderr")
	s := &server{name: "bonesync (baseline)", addr: addr(ports[0]), logs: []string{stderrLog}}
	s.cmd = exec.Command(bin, "serve", "-state", filepath.Join(dir, "state"), "-config", filepath.Join(dir, "bonesync.conf"),
		"-https", addr(ports[0]), "-http", addr(ports[1]), "-ssh", addr(ports[2]))
	var err error
	if s.cmd.Stderr, err = os.Create(stderrLog); err != nil {
		return nil, err
	}
	if err := start(ctx, s, func() error { return dialable(s.addr) }); err != nil {
		return nil, err
	}
	return s, nil
}

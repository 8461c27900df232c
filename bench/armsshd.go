package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// ptotalLine is what the armcost profiling plugin (insnprof.c) writes as
// each process exits: its pid and the instructions it executed itself
// (a forked child counts from its fork).
var ptotalLine = regexp.MustCompile(`(?m)^ptotal (\d+) (\d+)$`)

// countSshdSFTP counts Debian's armhf sshd (OpenSSH 9.2) over the same
// sftpSteps as bonesync, with the same client and user key.
//
// Each connection is one `sshd -i` under qemu-arm: a new sshd process
// that reads its configuration and host key, then serves the connection
// on its standard input and output. That is the work Debian's sshd does
// per connection anyway, since its listener re-executes itself for each
// one (the re-executed sshd loads its host key and configuration again),
// and it makes every instruction of the connection countable: the
// profiling plugin writes each process's own total as it exits (the
// privilege-separated child, the post-login monitor and session child,
// and the internal SFTP server), and their sum is the connection's cost.
// The plugin's lines go to the log file or, from the privsep child (in a
// chroot, with no descriptors and no file size left), to stderr, read here
// through a pipe. Debian's sshd_config also runs PAM (UsePAM yes), which
// this count leaves out (its modules are not in the sysroot): sshd's
// figure is a floor.
func countSshdSFTP(ctx context.Context, o *options, key *sshClientKey) (map[string]float64, error) {
	d, err := newArmSshd(ctx, o, key)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(d.dir)
	steps := sftpSteps(d.files)
	counts := make([]float64, len(steps))
	for i, step := range steps {
		if counts[i], err = d.count(ctx, fmt.Sprint(i), func(c net.Conn) error {
			return sftpSession(c, d.user, key, step)
		}); err != nil {
			return nil, fmt.Errorf("sshd, SFTP session %d: %w", i, err)
		}
	}
	return sftpFigures(counts), nil
}

// countSshdOpenSSH counts sshd as countSshdSFTP does, with OpenSSH's own
// sftp client, as the product's rows with that client are counted: a
// put and a get of armServeMiB less ones of armServeBaseMiB, per MiB.
func countSshdOpenSSH(ctx context.Context, o *options, key *sshClientKey) (map[string]float64, error) {
	d, err := newArmSshd(ctx, o, key)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(d.dir)
	keyFile, err := key.privateFile(o.work)
	if err != nil {
		return nil, err
	}
	local := map[string]string{"big": filepath.Join(o.work, "serve-big.bin"), "base": filepath.Join(o.work, "serve-base.bin")}
	for name, size := range map[string]int{"big": armServeMiB, "base": armServeBaseMiB} {
		if err := os.WriteFile(local[name], bulkBodyMiB(armServeMiB)[:size<<20], 0o644); err != nil {
			return nil, err
		}
	}
	counts := map[string]float64{}
	for _, verb := range []string{"put", "get"} {
		for _, name := range []string{"big", "base"} {
			remote := filepath.Join(d.files, name+".bin")
			cmd := "put " + local[name] + " " + remote
			if verb == "get" {
				cmd = "get " + remote + " /dev/null"
			}
			n, err := d.countExit(ctx, verb+"-"+name, true, func(c net.Conn) error { return bridgedSFTP(ctx, c, d.user, keyFile, cmd) })
			if err != nil {
				return nil, fmt.Errorf("sshd, OpenSSH's sftp %q: %w", cmd, err)
			}
			counts[verb+" "+name] = n
		}
		counts[verb] = (counts[verb+" big"] - counts[verb+" base"]) / float64(armServeMiB-armServeBaseMiB) / 1e6
	}
	return counts, nil
}

// bridgedSFTP runs OpenSSH's sftp client against the connection c, over
// a loopback port that passes the bytes through.
func bridgedSFTP(ctx context.Context, c net.Conn, user, keyFile, command string) error {
	defer c.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	go func() {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		defer in.Close()
		go func() { io.Copy(c, in); c.(interface{ CloseWrite() error }).CloseWrite() }()
		io.Copy(in, c)
	}()
	return opensshSFTP(ctx, ln.Addr().String(), user, keyFile, command)
}

// armSshd is Debian's armhf sshd set up to be counted, one `sshd -i` a
// connection: its folder, the user's files, the configuration.
type armSshd struct {
	o                *options
	plugin, sshd     string
	dir, files, conf string
	user             string
}

func newArmSshd(ctx context.Context, o *options, key *sshClientKey) (*armSshd, error) {
	sshd := filepath.Join(o.sysroot, "usr/sbin/sshd")
	if _, err := os.Stat(sshd); err != nil {
		return nil, fmt.Errorf("no armhf sshd in %s (bench/armhf-sysroot.sh puts it there)", o.sysroot)
	}
	if _, err := user.Lookup("sshd"); err != nil {
		return nil, fmt.Errorf("no sshd user for its privilege separation (Debian's openssh-server makes it): %w", err)
	}
	plugin, err := buildPlugin(ctx, o, "insnprof")
	if err != nil {
		return nil, err
	}
	// The user is nobody, whose files are in a folder of their own: a
	// login of root would skip sshd's privilege separation after login
	// (its fork and messages), which every other user gets.
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.Atoi(u.Uid)
	dir, err := os.MkdirTemp("", "bonesync-arm-sshd-")
	if err != nil {
		return nil, err
	}
	d := &armSshd{o: o, plugin: plugin, sshd: sshd, dir: dir, files: filepath.Join(dir, "files"), user: u.Username}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(d.files, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chown(d.files, uid, -1); err != nil {
		return nil, err
	}
	_, hostPEM, err := sshdHostKey()
	if err != nil {
		return nil, err
	}
	authorized, err := os.ReadFile(key.authorized)
	if err != nil {
		return nil, err
	}
	if d.conf, err = writeSSHD(dir, hostPEM, authorized); err != nil {
		return nil, err
	}
	return d, nil
}

// count runs one `sshd -i` under qemu-arm with the profiling plugin for
// the client and returns the instructions of all its processes.
func (d *armSshd) count(ctx context.Context, name string, client func(net.Conn) error) (float64, error) {
	return d.countExit(ctx, name, false, client)
}

// countExit is count, with countSshdConn's anyExit.
func (d *armSshd) countExit(ctx context.Context, name string, anyExit bool, client func(net.Conn) error) (float64, error) {
	log := filepath.Join(d.dir, "plugin-"+name+".log")
	// Written by every process, the logged-in user's included.
	if err := os.WriteFile(log, nil, 0o666); err != nil {
		return 0, err
	}
	if err := os.Chmod(log, 0o666); err != nil {
		return 0, err
	}
	cmd := exec.Command("qemu-arm", "-cpu", "cortex-a8", "-L", d.o.sysroot, "-plugin", d.plugin, "-d", "plugin",
		d.sshd, "-i", "-e", "-f", d.conf, "-o", "LogLevel=ERROR")
	cmd.Env = append(os.Environ(), "PLUGIN_LOG="+log)
	return countSshdConn(ctx, cmd, log, anyExit, client)
}

// sshdProcesses are the processes of one `sshd -i` connection: the one
// that starts and stays as the monitor, the privilege-separated child
// (key exchange, login), the child that runs the session as the user
// after login, and the internal SFTP server it forks.
const sshdProcesses = 4

// countSshdConn runs cmd (an `sshd -i` under qemu-arm with the profiling
// plugin) on one end of a socket pair, the client on the other, and
// returns the instructions all its processes executed.
// With anyExit, sshd's own exit status is not a failure once the client
// succeeded (OpenSSH's client, through a bridge, leaves before sshd's
// last write: status 255).
func countSshdConn(ctx context.Context, cmd *exec.Cmd, log string, anyExit bool, client func(net.Conn) error) (float64, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	srv, cli := os.NewFile(uintptr(fds[0]), "sshd"), os.NewFile(uintptr(fds[1]), "client")
	defer cli.Close()
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = srv, srv, &stderr
	// sshd's children hold stderr too: on a timeout the whole group goes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Start()
	srv.Close()
	if err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	c, err := net.FileConn(cli)
	if err == nil {
		err = client(c)
	}
	cli.Close()
	select {
	case werr := <-done:
		// Every process gone but the SFTP server's, whose stderr is the
		// session's: it ended first, when its input did.
		if werr != nil && !(anyExit && err == nil) {
			err = errors.Join(err, fmt.Errorf("sshd: %w", werr))
		}
	case <-time.After(2 * time.Minute):
		kill()
		<-done
		err = errors.Join(err, errors.New("sshd did not exit after the connection closed"))
	case <-ctx.Done():
		kill()
		<-done
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		return 0, fmt.Errorf("%w; sshd said: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	// A process writes its line as it exits (or when it sends SIGTERM:
	// the last line of a pid is its total).
	own := map[string]float64{}
	for wait := 0; ; wait++ {
		b, _ := os.ReadFile(log)
		for _, m := range ptotalLine.FindAllStringSubmatch(string(b)+"\n"+stderr.String(), -1) {
			n, _ := strconv.ParseFloat(m[2], 64)
			own[m[1]] = n
		}
		if len(own) == sshdProcesses {
			break
		}
		if len(own) > sshdProcesses || wait == 50 {
			return 0, fmt.Errorf("counts of %d processes in %s and stderr, want %d (sshd, its privsep child, the session and SFTP): %s",
				len(own), log, sshdProcesses, stderr.Bytes())
		}
		time.Sleep(100 * time.Millisecond)
	}
	var total float64
	for _, n := range own {
		total += n
	}
	return total, nil
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The breakdown's harness, bench/armcost: `bonesync serve` (the product's
// own wiring, package server) with a control connection that places
// markers, built GOARM=7 and run under qemu-arm with the counting plugin
// on a copy of a state directory prepared here (armBox). It starts as the
// product's count starts the board's binary (startServe: the addresses
// from sd_notify's READY=1); the harness adds only the markers, placed
// when no connection is open on the server's ports.

// armBox is the state directory the harness serves with key: the
// benchmark keys, a first `bonesync bench` (the native binary), the user
// bench with its password and the client's SSH key. Made once a run; each
// start serves a copy of it.
func armBox(ctx context.Context, o *options, key string) (string, error) {
	dir := filepath.Join(o.work, "arm-harness-"+key)
	if _, err := os.Stat(filepath.Join(dir, "bonesync.conf")); err == nil {
		return dir, nil
	}
	client, err := armClient(o)
	if err != nil {
		return "", err
	}
	if err := prepareUserBox(ctx, o, dir, key, client); err != nil {
		os.RemoveAll(dir) // not half made for the next start
		return "", err
	}
	return dir, nil
}

// prepareUserBox prepares a state directory in dir for key (pinned keys
// as in the other blocks, a first native `bonesync bench`) with the user
// bench, its password and client's key.
func prepareUserBox(ctx context.Context, o *options, dir, key string, client *sshClientKey) error {
	_, sshKey, err := benchKey("ed25519")
	if err != nil {
		return err
	}
	_, tlsKey, err := benchKey(key)
	if err != nil {
		return err
	}
	if err := prepareBonesync(ctx, o.bonesync, dir, key, tlsKey, sshKey); err != nil {
		return err
	}
	st := filepath.Join(dir, "state")
	add := exec.CommandContext(ctx, o.bonesync, "user", "-state", st, "add", armServeUser)
	add.Stdin = strings.NewReader(armServePassword + "\n")
	if out, err := add.CombinedOutput(); err != nil {
		return fmt.Errorf("user add: %v %s", err, out)
	}
	if out, err := exec.CommandContext(ctx, o.bonesync, "user", "-state", st, "key", "add", armServeUser, client.authorized).CombinedOutput(); err != nil {
		return fmt.Errorf("user key add: %v %s", err, out)
	}
	return nil
}

// armClient is the run's SSH client key, which every counted SSH server
// authorizes.
func armClient(o *options) (*sshClientKey, error) {
	if o.sshClient == nil {
		k, err := newSSHClientKey(o.work)
		if err != nil {
			return nil, err
		}
		o.sshClient = k
	}
	return o.sshClient, nil
}

// boxFiles are the box's chain and key, for a peer to serve the same
// (nginx), and its CA certificate, the file a handshake count GETs.
func boxFiles(box string) (chainFile, keyFile string, ca []byte, err error) {
	st := filepath.Join(box, "state")
	ca, err = os.ReadFile(filepath.Join(st, "ca.crt"))
	return filepath.Join(st, "tls.crt"), filepath.Join(st, "tls.key"), ca, err
}

var markLine = regexp.MustCompile(`(?m)^mark (\d+) (\d+)$`)

// armServer is bench/armcost running under qemu-arm with the armcost
// plugin, and the control connection that places its markers.
type armServer struct {
	*server                  // the process
	tlsAddr, sftpAddr string // its HTTPS and SSH addresses
	ctl               net.Conn
	ctlR              *bufio.Reader
	log               string // the plugin's output
}

// startArmServer runs bin (bench/armcost's build) under qemu-arm on one
// core (as the board has) on a copy of box, its counts in the copy's
// plugin.log, and connects to its control port.
func startArmServer(ctx context.Context, o *options, plugin, bin, box string) (*armServer, error) {
	return startArmServerEnv(ctx, o, plugin, bin, box, nil)
}

// startArmServerEnv is startArmServer with env added to the server's
// environment (the profiling plugin's PROF_OUT).
func startArmServerEnv(ctx context.Context, o *options, plugin, bin, box string, env []string) (*armServer, error) {
	run, err := os.MkdirTemp(o.work, "arm-run-")
	if err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, "cp", "-a", box+"/.", run).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copy the state: %v %s", err, out)
	}
	log := filepath.Join(run, "plugin.log")
	argv := []string{"qemu-arm", "-cpu", "cortex-a8", "-plugin", plugin, "-d", "plugin", "-D", log, bin}
	s, sshAddr, err := startServe(ctx, run, argv, append([]string{"GOMAXPROCS=1"}, env...), 5*time.Minute)
	if err != nil {
		return nil, err
	}
	s.name = "armcost"
	a := &armServer{server: s, tlsAddr: s.addr, sftpAddr: sshAddr, log: log}
	// "ctl ADDR" is the harness's first line, written before the server
	// started, so before its READY=1.
	b, err := os.ReadFile(filepath.Join(run, "serve.stdout"))
	line, _, _ := strings.Cut(string(b), "\n")
	var ctlAddr string
	if _, err2 := fmt.Sscanf(line, "ctl %s", &ctlAddr); err != nil || err2 != nil {
		a.close()
		return nil, fmt.Errorf("armcost said %q (%v)%s", line, err, s.tail())
	}
	if a.ctl, err = net.Dial("tcp", ctlAddr); err != nil {
		a.close()
		return nil, err
	}
	a.ctlR = bufio.NewReader(a.ctl)
	return a, nil
}

// say sends a control command ("mark N", "quit") and waits for its "ok".
func (a *armServer) say(cmd string) error {
	a.ctl.SetDeadline(time.Now().Add(10 * time.Minute))
	if _, err := io.WriteString(a.ctl, cmd+"\n"); err != nil {
		return err
	}
	if ans, err := a.ctlR.ReadString('\n'); err != nil || ans != "ok\n" {
		return fmt.Errorf("armcost %q: %q %v%s", cmd, ans, err, a.tail())
	}
	return nil
}

// marks quits the server and returns the instructions counted up to each
// marker, by label.
func (a *armServer) marks() (map[int]float64, error) {
	if err := a.say("quit"); err != nil {
		return nil, err
	}
	<-a.done
	b, err := os.ReadFile(a.log)
	if err != nil {
		return nil, err
	}
	marks := map[int]float64{}
	for _, m := range markLine.FindAllStringSubmatch(string(b), -1) {
		label, _ := strconv.Atoi(m[1])
		n, _ := strconv.ParseFloat(m[2], 64)
		marks[label] = n
	}
	return marks, nil
}

func (a *armServer) close() {
	if a.ctl != nil {
		a.ctl.Close()
	}
	a.stop()
}

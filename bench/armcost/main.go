// Command armcost is `bonesync serve` (package server's Run: the product's
// own wiring, every protocol and job on a real state directory) with one
// thing added, a control connection that places markers, so that the
// armcost plugin (../shared/tools/armcost) can count the ARM instructions
// the server spends between them. It is built GOARM=7 and run by `go run
// ./bench` under qemu-arm; the load comes from the bench program, a
// separate native process, so every instruction counted here is the
// server's.
//
//	armcost serve -state DIR -config FILE [-files DIR] -https ADDR -http ADDR -ssh ADDR
//
// The flags are those of `bonesync serve` that the bench passes; the state
// directory is one the bench prepared with the native binary (keys, a
// decision, the user bench). The harness opens the ports itself, counting
// the connections open on them, and hands them to the server
// (server.Options.Listeners); the server says it serves, and where, as it
// does to PID 1 (sd_notify's READY=1 with its addresses).
//
// It prints "ctl ADDR" on stdout, before the server starts. On the control
// connection, a line "mark N" waits until no connection is open on the
// server's ports (the server is quiescent), executes the marker syscall
// 0x7ff0 with label N and answers "ok"; "quit" exits. The plugin prints,
// for each marker, the instructions executed by the whole process since
// the previous one, so the count between two markers is all the work of
// the connections served between them: accept, handshake, request,
// response, close, and the Go runtime's share (GC, scheduler), with
// whatever of the server's own timers fell between them.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/appliance/listen"
	"github.com/bonesync/bonesync/appliance/server"
)

// markSyscall is the syscall number the armcost plugin treats as a marker
// (the guest gets ENOSYS and nothing else happens).
const markSyscall = 0x7ff0

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "armcost: %v\n", err)
		os.Exit(1)
	}
}

// counted counts a listener's open connections into open, for the
// quiescence check before a marker.
type counted struct {
	net.Listener
	open *atomic.Int64
}

func (l counted) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	return &countedConn{Conn: c, open: l.open}, nil
}

type countedConn struct {
	net.Conn
	open *atomic.Int64
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "serve" {
		return errors.New("usage: armcost serve -state DIR -config FILE [-files DIR] -https ADDR -http ADDR -ssh ADDR")
	}
	fs := flag.NewFlagSet("armcost serve", flag.ContinueOnError)
	o := server.Options{Stdout: stdout, Stderr: stderr,
		// No refresh within a run: the watcher's and the first-login
		// tidy's looks would fall between markers.
		Refresh: 24 * time.Hour}
	fs.StringVar(&o.State, "state", "", "the state directory")
	fs.StringVar(&o.Config, "config", "", "the config file")
	fs.StringVar(&o.Files, "files", "", "the users' files (default: DIR/files of -state)")
	addrs := map[string]*string{}
	for _, p := range listen.Ports {
		addrs[p.Name] = fs.String(p.Name, "127.0.0.1:0", p.Usage)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if o.Files == "" {
		o.Files = filepath.Join(o.State, "files")
	}
	var open atomic.Int64 // connections on the server's ports, from accept to close
	var err error
	if o.Listeners, err = listenCounted(addrs, &open); err != nil {
		return err
	}
	ctl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ctl %s\n", ctl.Addr())
	served := make(chan error, 1)
	go func() { served <- server.Run(context.Background(), o) }()
	controlled := make(chan error, 1)
	go func() { controlled <- control(ctl, &open) }()
	select {
	case err := <-served:
		return fmt.Errorf("the server stopped: %v", err)
	case err := <-controlled:
		return err // quit: the plugin has every marker's count
	}
}

// listenCounted opens the server's ports at addrs (by port name), each
// counting its connections into open.
func listenCounted(addrs map[string]*string, open *atomic.Int64) (*listen.Listeners, error) {
	lns := &listen.Listeners{}
	for _, p := range []struct {
		name string
		into *net.Listener
	}{{listen.HTTPS.Name, &lns.HTTPS}, {listen.HTTP.Name, &lns.HTTP}, {listen.SSH.Name, &lns.SSH}} {
		ln, err := net.Listen("tcp", *addrs[p.name])
		if err != nil {
			lns.Close()
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		*p.into = counted{ln, open}
	}
	return lns, nil
}

// control serves the control connection: markers, then quit.
func control(ln net.Listener, open *atomic.Int64) error {
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "mark":
			label, err := strconv.ParseUint(arg, 10, 32)
			if err != nil {
				return fmt.Errorf("bad mark %q", arg)
			}
			for open.Load() != 0 {
				time.Sleep(5 * time.Millisecond)
			}
			syscall.RawSyscall(markSyscall, uintptr(label), 0, 0)
			io.WriteString(c, "ok\n")
		case "quit":
			io.WriteString(c, "ok\n")
			return nil
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
	}
	return sc.Err()
}

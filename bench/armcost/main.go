// Command armcost serves bonesync's own HTTPS stack (web.TLSConfig,
// web.HandshakeListener, web.HTTPS) on loopback so that the armcost plugin
// (../shared/tools/armcost) can count the ARM instructions the server side
// spends per handshake. It is built GOARM=7 and run by `go run ./bench` under
// qemu-arm; the load comes from the bench program, a separate native
// process, so every instruction counted here is the server's.
//
//	armcost -chain CHAIN.pem -key KEY.pem [-dav DIR]
//
// With -dav it also serves WebDAV (web.DAV) on a store in DIR with the user
// "bench" (password "bench-password"), so uploads can be counted: the
// bench's upload count compares this with the build without digests (tag
// benchnohash).
//
// It prints "tls ADDR ctl ADDR" on stdout. On the control connection, a line
// "mark N" waits until no HTTPS connection is open (the server is quiescent),
// executes the marker syscall 0x7ff0 with label N and answers "ok"; "quit"
// exits. The plugin prints, for each marker, the instructions executed by the
// whole process since the previous one, so the count between two markers is
// all the work of the connections served between them: accept, handshake,
// request, response, close, and the Go runtime's share (GC, scheduler).
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/users"
	"github.com/bonesync/bonesync/appliance/web"
)

// markSyscall is the syscall number the armcost plugin treats as a marker
// (the guest gets ENOSYS and nothing else happens).
const markSyscall = 0x7ff0

func main() {
	chain := flag.String("chain", "", "PEM file: the leaf certificate, then the CA")
	key := flag.String("key", "", "PEM file: the leaf's private key (PKCS#8)")
	davDir := flag.String("dav", "", "serve WebDAV on a store in this folder")
	flag.Parse()
	if err := run(*chain, *key, *davDir, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "armcost: %v\n", err)
		os.Exit(1)
	}
}

// content is what web.HTTPS serves: here only /ca.crt is asked for.
type content struct{ ca []byte }

func (c content) CAPEM() []byte          { return c.ca }
func (c content) Report() *report.Report { return &report.Report{} }

// newDAV is WebDAV on a store in dir, with the user bench.
func newDAV(dir string) (*web.DAV, error) {
	st, err := state.Open(filepath.Join(dir, "state"))
	if err != nil {
		return nil, err
	}
	db, err := users.Open(st)
	if err != nil {
		return nil, err
	}
	if !db.Exists("bench") {
		if err := db.Add("bench", "bench-password"); err != nil {
			return nil, err
		}
	}
	files, err := store.Open(filepath.Join(dir, "files"))
	if err != nil {
		return nil, err
	}
	return &web.DAV{Users: db, Store: files, Guard: guard.New(nil), Log: sysd.NewLogger(os.Stderr)}, nil
}

func run(chainFile, keyFile, davDir string, stdin io.Reader, stdout io.Writer) error {
	cert, err := tls.LoadX509KeyPair(chainFile, keyFile)
	if err != nil {
		return fmt.Errorf("load certificate: %w", err)
	}
	if len(cert.Certificate) < 2 {
		return errors.New("the chain needs the leaf and the CA")
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[len(cert.Certificate)-1]})

	ctx := context.Background()
	tlsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctlLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	// The same configuration, handshake listener and handler as `bonesync
	// serve` (serve.go), with post-quantum off as in the host comparison.
	cfg := web.TLSConfig(func() *tls.Certificate { return &cert }, func() bool { return false }, time.Now)
	var dav *web.DAV
	if davDir != "" {
		if dav, err = newDAV(davDir); err != nil {
			return err
		}
	}
	var open atomic.Int64
	srv := &http.Server{
		Handler:           web.HTTPS(content{ca}, dav, nil),
		ReadHeaderTimeout: 20 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				open.Add(1)
			case http.StateClosed, http.StateHijacked:
				open.Add(-1)
			}
		},
	}
	hl := web.HandshakeListener(ctx, tlsLn, cfg, web.Handshakes{Slots: guard.NewLimiter(4, 10*time.Second), Timeout: 60 * time.Second})
	go srv.Serve(hl)
	fmt.Fprintf(stdout, "tls %s ctl %s\n", tlsLn.Addr(), ctlLn.Addr())

	c, err := ctlLn.Accept()
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

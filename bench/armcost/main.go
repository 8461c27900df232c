// Command armcost serves bonesync's own HTTPS stack (front.TLSConfig,
// front.HandshakeListener, front.HTTPS) on loopback so that the armcost plugin
// (../shared/tools/armcost) can count the ARM instructions the server side
// spends per handshake. It is built GOARM=7 and run by `go run ./bench` under
// qemu-arm; the load comes from the bench program, a separate native
// process, so every instruction counted here is the server's.
//
//	armcost -chain CHAIN.pem -key KEY.pem [-dav DIR [-sftp [-authorized FILE]]]
//
// With -dav it also serves WebDAV (files.Handler) on a store in DIR with the user
// "bench" (password "bench-password"), so uploads can be counted: the
// bench's upload count compares this with the build without digests
// (bench/nohash.go). The previews (preview.Handler) are served too, so
// that making one can be counted.
//
// With -sftp it also serves SFTP (sftpd.Server, a throwaway ed25519 host
// key) on the same store and user, and prints " sftp ADDR" after the
// rest, so that SFTP transfers can be counted too. -authorized gives the
// user "bench" the public keys in FILE (authorized_keys format), so the
// login is counted with a key, as sshd's is.
//
// It prints "tls ADDR ctl ADDR" on stdout. On the control connection, a line
// "mark N" waits until no connection is open (the server is quiescent),
// executes the marker syscall 0x7ff0 with label N and answers "ok"; "quit"
// exits. The plugin prints, for each marker, the instructions executed by the
// whole process since the previous one, so the count between two markers is
// all the work of the connections served between them: accept, handshake,
// request, response, close, and the Go runtime's share (GC, scheduler).
package main

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
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
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/files"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/preview"
	"github.com/bonesync/bonesync/appliance/sftpd"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/users"
)

// markSyscall is the syscall number the armcost plugin treats as a marker
// (the guest gets ENOSYS and nothing else happens).
const markSyscall = 0x7ff0

func main() {
	chain := flag.String("chain", "", "PEM file: the leaf certificate, then the CA")
	key := flag.String("key", "", "PEM file: the leaf's private key (PKCS#8)")
	davDir := flag.String("dav", "", "serve WebDAV on a store in this folder")
	withSFTP := flag.Bool("sftp", false, "serve SFTP too (needs -dav)")
	authorized := flag.String("authorized", "", "authorized_keys file: public keys of the user bench")
	flag.Parse()
	if err := run(*chain, *key, *davDir, *authorized, *withSFTP, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "armcost: %v\n", err)
		os.Exit(1)
	}
}

// content is the CA front.HTTPS serves: here only /ca.crt is asked for.
type content struct{ ca *x509.Certificate }

func (c content) CACert() *x509.Certificate { return c.ca }

// dav is the files protocol and what SFTP shares with it.
type dav struct {
	*files.Handler
	previews *preview.Handler
	db       *users.DB
	door     *auth.Door
}

// newDAV is WebDAV on a store in dir, with the user bench and, if
// authorized is set, the public keys in that file.
func newDAV(dir, authorized string) (*dav, error) {
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
	if authorized != "" {
		b, err := os.ReadFile(authorized)
		if err != nil {
			return nil, err
		}
		if _, err := db.AddKeys("bench", b); err != nil {
			return nil, fmt.Errorf("%s: %w", authorized, err)
		}
	}
	fs, err := store.Open(filepath.Join(dir, "files"))
	if err != nil {
		return nil, err
	}
	log := sysd.NewLogger(os.Stderr)
	door := auth.New(db, log)
	h := &files.Handler{Store: fs, Quotas: db, Locks: locks.New(), Log: log}
	p := &preview.Handler{Maker: &preview.Maker{Store: fs, Log: log}, Log: log}
	return &dav{Handler: h, previews: p, db: db, door: door}, nil
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

func run(chainFile, keyFile, davDir, authorized string, withSFTP bool, stdin io.Reader, stdout io.Writer) error {
	cert, err := tls.LoadX509KeyPair(chainFile, keyFile)
	if err != nil {
		return fmt.Errorf("load certificate: %w", err)
	}
	if len(cert.Certificate) < 2 {
		return errors.New("the chain needs the leaf and the CA")
	}
	ca, err := x509.ParseCertificate(cert.Certificate[len(cert.Certificate)-1])
	if err != nil {
		return fmt.Errorf("the chain's CA: %w", err)
	}

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
	// serve` (package server), with post-quantum off as in the host
	// comparison.
	cfg := front.TLSConfig(func() []tls.Certificate { return []tls.Certificate{cert} }, func() bool { return false }, time.Now)
	var d *dav
	if authorized != "" && davDir == "" {
		return errors.New("-authorized needs -dav")
	}
	if withSFTP && davDir == "" {
		return errors.New("-sftp needs -dav")
	}
	if davDir != "" {
		if d, err = newDAV(davDir, authorized); err != nil {
			return err
		}
	}
	var mounts []front.Mount
	var door front.Door // nil without -dav: the CA alone, public
	if d != nil {
		mounts = append(mounts, d.Handler, d.previews)
		door = d.door
	}
	var open atomic.Int64 // HTTPS and SFTP connections, from accept to close
	srv := &http.Server{
		Handler:           front.HTTPS(content{ca}, "80", nil, door, mounts...),
		ReadHeaderTimeout: 20 * time.Second,
	}
	hl := front.HandshakeListener(ctx, counted{tlsLn, &open}, cfg, front.Handshakes{Slots: guard.NewLimiter(4, 10*time.Second), Timeout: 60 * time.Second})
	go srv.Serve(hl)
	sftpAddr := ""
	if withSFTP {
		_, hostKey, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return err
		}
		log := sysd.NewLogger(os.Stderr)
		ss := &sftpd.Server{Quotas: d.db, Store: d.Store, Locks: d.Locks,
			Handshakes:  guard.NewLimiter(4, 10*time.Second),
			Admission:   guard.NewAdmission("sftp", guard.Limits{PerAddress: 16, Waiting: 8}, log),
			HostKeys:    func() []crypto.Signer { return []crypto.Signer{hostKey} },
			PostQuantum: func() bool { return false },
			Log:         log,
		}
		if err := ss.Check(); err != nil {
			return err
		}
		sftpLn, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		go ss.Serve(ctx, counted{sftpLn, &open})
		sftpAddr = " sftp " + sftpLn.Addr().String()
	}
	fmt.Fprintf(stdout, "tls %s ctl %s%s\n", tlsLn.Addr(), ctlLn.Addr(), sftpAddr)

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

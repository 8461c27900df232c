// Package sftpd is the box's SFTP service: SSH with password and public-key
// login (golang.org/x/crypto/ssh), the sftp subsystem only
// (github.com/pkg/sftp's request server), each user confined to their own
// directory of the same store WebDAV serves.
package sftpd

import (
	"bytes"
	"context"
	"crypto"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/locks"
	"github.com/bonesync/bonesync/appliance/store"
)

// Door is the login door as SSH asks it (package auth).
type Door interface {
	// Password checks a password; a wrong one counts towards a ban.
	Password(addr string, way auth.Way, user, pw string) auth.Result
	// PublicKey checks one key a client offers.
	PublicKey(addr, user string, key ssh.PublicKey) auth.Result
	// KeysRefused counts a connection whose keys were all refused.
	KeysRefused(addr, user string)
}

// Quotas are the users' quotas in bytes (users.DB), 0 for none.
type Quotas interface {
	Quota(user string) int64
}

// Files is the store as SFTP uses it: each user's files.
type Files interface {
	Tree(user string) (*store.Tree, error)
}

// Server serves SFTP.
type Server struct {
	Door   Door
	Quotas Quotas
	Store  Files
	// Locks are WebDAV's: a locked path is not changed over SFTP either.
	Locks *locks.Table
	// Handshakes is the box's handshake limiter, shared with HTTPS: a
	// connection takes a slot only while the server works on a complete
	// key-exchange message (guard.Gate).
	Handshakes *guard.Limiter
	// Admission caps connections per client address; a connection counts
	// as waiting until its login.
	Admission *guard.Admission
	// HostKeys (the chosen host key, then the other family's) and
	// PostQuantum are read for every connection, so a new decision from
	// `bonesync bench` applies to the next one. The client picks among the
	// host keys by its own preference.
	HostKeys    func() []crypto.Signer
	PostQuantum func() bool
	// Algorithms may replace the default lists (the config's ssh_kex,
	// ssh_ciphers and ssh_macs).
	Algorithms Overrides
	// IdleTimeout closes a logged-in connection that sent nothing for that
	// long (0: 15 minutes).
	IdleTimeout time.Duration
	Log         *slog.Logger
	// HandshakeTimeout bounds key exchange plus login.
	HandshakeTimeout time.Duration
	// SessionsPerConn and SessionsPerUser cap the sessions (channels) open
	// at once on one connection and for one user over all of them
	// (0: 10 and 32).
	SessionsPerConn, SessionsPerUser int
	// Unavailable, when set, is why no files can be served (the data disk
	// is unplugged): a login still works, and every session ends with this
	// line on stderr and exit status 1, writing nothing.
	Unavailable string

	wg       sync.WaitGroup
	sessions sessionCount
	notices  *guard.Notices

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // open, for closeAll
	closed bool
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.conns == nil {
		s.conns = map[net.Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// closeAll ends every connection, logged in or not, at shutdown.
func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
}

// Check validates the algorithm lists and the host key; call it at start so
// a mistake stops the box with a message rather than at the first login.
func (s *Server) Check() error {
	alg := Configured(s.Algorithms, s.PostQuantum())
	if err := alg.Validate(); err != nil {
		return err
	}
	for _, why := range Discouraged(alg) {
		s.Log.Warn("sftp: the config offers a discouraged algorithm", "why", why)
	}
	_, err := s.config(&attempt{}, nil)
	return err
}

// config is the server configuration for one connection.
// serverVersion is the SSH version line the box sends (readHello sends it
// ahead of x/crypto).
const serverVersion = "SSH-2.0-bonesync"

// config is the connection's SSH configuration; offered are the host key
// algorithms the client offered (nil: unknown), which decide the host keys
// (hostKeysFor).
func (s *Server) config(a *attempt, offered []string) (*ssh.ServerConfig, error) {
	alg := Configured(s.Algorithms, s.PostQuantum())
	cfg := &ssh.ServerConfig{
		Config:                  ssh.Config{KeyExchanges: alg.KeyExchanges, Ciphers: alg.Ciphers, MACs: alg.MACs},
		PublicKeyAuthAlgorithms: alg.PublicKeyAuths,
		MaxAuthTries:            6,
		ServerVersion:           serverVersion,
		// Called after the key exchange, before the login: no banner,
		// only the login's own time (see serveConn).
		BannerCallback: func(ssh.ConnMetadata) string {
			if a.kexDone != nil {
				a.kexDone()
			}
			return ""
		},
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			addr := guard.Host(c.RemoteAddr().String())
			switch s.Door.Password(addr, auth.SSHPassword, c.User(), string(pw)) {
			case auth.OK:
				return &ssh.Permissions{Extensions: map[string]string{"user": c.User()}}, nil
			case auth.Wrong:
				a.passwordFailed.Store(true)
				return nil, errors.New("wrong user or password")
			case auth.Fault:
				a.fault.Store(true)
				return nil, errors.New("the server cannot check passwords now")
			}
			return nil, fmt.Errorf("%s: too many failed logins", addr)
		},
		PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			a.user.Store(c.User())
			a.keyOffered.Store(true)
			// Called for every key a client offers; only the final outcome
			// of a connection counts as a failure (see serveConn).
			switch s.Door.PublicKey(guard.Host(c.RemoteAddr().String()), c.User(), key) {
			case auth.OK:
				return &ssh.Permissions{Extensions: map[string]string{"user": c.User()}}, nil
			case auth.Fault:
				a.fault.Store(true)
				return nil, errors.New("the server cannot check keys now")
			}
			return nil, errors.New("key not authorized")
		},
	}
	var signers []ssh.Signer
	for _, k := range s.HostKeys() {
		signer, err := keys.SSHSigner(k)
		if err != nil {
			return nil, fmt.Errorf("host key: %w", err)
		}
		signers = append(signers, signer)
	}
	for _, signer := range hostKeysFor(signers, offered) {
		cfg.AddHostKey(signer)
	}
	return cfg, nil
}

// Serve accepts connections on ln until ctx ends or ln is closed. When ctx
// ends it also closes the connections still open (an upload in flight is
// then aborted, never half-applied) and returns once their goroutines are
// done.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.notices = guard.NewNotices(s.Log)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
			ln.Close()
			s.closeAll()
		case <-stop: // ln closed by someone else: no goroutine left behind
		}
	}()
	defer s.wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			time.Sleep(100 * time.Millisecond) // EMFILE and the like: wait, go on
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(ctx, c)
		}()
	}
}

func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	defer c.Close()
	if !s.track(c) {
		return // shutting down
	}
	defer s.untrack(c)
	// A banned client's connections end here (guard.Admission.Bans),
	// but one every guard.HearEvery, refused at its login.
	addr := guard.Host(c.RemoteAddr().String())
	ticket := s.Admission.Admit(addr, c)
	if ticket == nil {
		return
	}
	defer ticket.Done()
	timeout := s.HandshakeTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	// Under a flood the key exchange gets less time (HandshakeTimeout);
	// the login, where a person may be typing a password, gets it whole.
	c.SetDeadline(time.Now().Add(s.Admission.HandshakeTimeout(timeout)))
	gate := guard.NewGate(ctx, c, s.Handshakes, sshPackets())
	defer gate.Open() // gives back a slot still held
	ic := &idleConn{Conn: gate}
	var a attempt
	a.kexDone = func() { c.SetDeadline(time.Now().Add(timeout)) }
	// The client's offer first, to give it the host key it takes; an offer
	// that cannot be read leaves x/crypto to say what is wrong with it.
	hc, offered, _ := readHello(ic, serverVersion)
	if hc == nil {
		return
	}
	cfg, err := s.config(&a, offered)
	var sc *ssh.ServerConn
	var chans <-chan ssh.NewChannel
	var reqs <-chan *ssh.Request
	if err == nil {
		sc, chans, reqs, err = ssh.NewServerConn(hc, cfg)
	}
	if errors.Is(err, guard.ErrNoSlot) {
		s.notices.Warn(addr+" slots", "sftp: dropped a connection: too many handshakes in flight (logged once an hour)", "addr", addr)
	}
	if err != nil {
		// A connection that ends without a login counts once: its wrong
		// passwords were counted as they came, its keys were not.
		var authErr *ssh.ServerAuthError
		if errors.As(err, &authErr) && !a.passwordFailed.Load() && a.keyOffered.Load() && !a.fault.Load() {
			user, _ := a.user.Load().(string)
			s.Door.KeysRefused(addr, user)
		}
		return
	}
	// From now on silence ends the connection: the read already waiting
	// gets the deadline too, not only the ones after the client's next byte.
	ticket.Ready()
	idle := s.idleTimeout()
	ic.idle.Store(int64(idle))
	c.SetWriteDeadline(time.Time{})
	c.SetReadDeadline(time.Now().Add(idle))
	defer sc.Close()
	// The connection's context ends when it does: a digest or a copy
	// it started (a CLOSE of a file written out of order) stops with it.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { sc.Wait(); cancel() }()
	go ssh.DiscardRequests(reqs)
	user := sc.Permissions.Extensions["user"]
	s.Log.Info("sftp: logged in", "user", user, "addr", c.RemoteAddr())
	perConn, perUser := s.sessionCaps()
	var open atomic.Int32 // this connection's sessions
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		if open.Load() >= int32(perConn) {
			s.notices.Warn(user+" conn", "sftp: refusing a session beyond ssh_sessions_per_connection (logged once an hour)", "user", user, "addr", addr, "limit", perConn)
			nc.Reject(ssh.ResourceShortage, "too many sessions on this connection")
			continue
		}
		if !s.sessions.take(user, perUser) {
			s.notices.Warn(user+" user", "sftp: refusing a session beyond ssh_sessions_per_user (logged once an hour)", "user", user, "limit", perUser)
			nc.Reject(ssh.ResourceShortage, "too many sessions for this user")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			s.sessions.give(user)
			return
		}
		open.Add(1)
		go func() {
			defer s.sessions.give(user)
			defer open.Add(-1)
			s.session(cctx, user, ch, chReqs)
		}()
	}
}

// sessionCaps are the sessions (channels) allowed at once: per connection
// (sftp, scp and sshfs use one, rclone a few), and per user over all
// connections.
func (s *Server) sessionCaps() (perConn, perUser int) {
	perConn, perUser = s.SessionsPerConn, s.SessionsPerUser
	if perConn <= 0 {
		perConn = 10
	}
	if perUser <= 0 {
		perUser = 32
	}
	return perConn, perUser
}

// sessionCount counts each user's open sessions.
type sessionCount struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *sessionCount) take(user string, limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[user] >= limit {
		return false
	}
	c.n[user]++
	return true
}

func (c *sessionCount) give(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[user]--; c.n[user] <= 0 {
		delete(c.n, user)
	}
}

func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return 15 * time.Minute
}

// onlySFTP is what a shell, a command (but the digests) or rsync gets.
const onlySFTP = "this box speaks SFTP only: use sftp, scp, rclone or sshfs"

// session answers a session channel: the sftp subsystem, the digest
// commands rclone runs (exec.go), and for a shell or any other command one
// line on stderr. Each ends with an exit-status, which scp and scripts read.
func (s *Server) session(ctx context.Context, user string, ch ssh.Channel, reqs <-chan *ssh.Request) {
	// The session counts (the caps) until the client has closed its side
	// too: a client that never answers our CLOSE keeps its slot.
	drained := make(chan struct{})
	drain := func() { go func() { ssh.DiscardRequests(reqs); close(drained) }() }
	defer func() { ch.Close(); <-drained }()
	for req := range reqs {
		var status uint32
		switch req.Type {
		case "subsystem":
			name, ok := sshString(req.Payload)
			if !ok || name != "sftp" {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			drain()
			if s.Unavailable != "" {
				fmt.Fprintln(ch.Stderr(), s.Unavailable)
				status = 1
				break
			}
			status = s.sftp(ctx, user, ch)
		case "exec":
			cmd, ok := sshString(req.Payload)
			if !ok {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			drain()
			if s.Unavailable != "" {
				fmt.Fprintln(ch.Stderr(), s.Unavailable)
				status = 1
				break
			}
			status = s.exec(ctx, user, cmd, ch, ch.Stderr())
		case "shell":
			req.Reply(true, nil)
			drain()
			fmt.Fprintln(ch.Stderr(), onlySFTP)
			status = 1
		default: // pty-req, env, x11-req, forwarding: none of it
			req.Reply(false, nil)
			continue
		}
		ch.CloseWrite()
		ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
		return
	}
	close(drained) // the client closed the channel before asking for anything
}

// sftp serves the sftp subsystem on ch until the client ends it.
func (s *Server) sftp(ctx context.Context, user string, ch ssh.Channel) uint32 {
	tree, err := s.Store.Tree(user)
	if err != nil {
		s.Log.Error("sftp: cannot open the files", "user", user, "err", err)
		return 1
	}
	defer tree.Close()
	tree.SetQuota(s.Quotas.Quota(user)) // read at each session's start
	tree.SetContext(ctx)
	var locked func(...locks.Change) error
	if s.Locks != nil {
		locked = func(changes ...locks.Change) error {
			for _, c := range changes { // in the owner's paths, as WebDAV keeps them
				space, at := user, c.Path
				if owner, op, err := tree.Owner(c.Path); err == nil {
					space, at = owner, op
				}
				if err := s.Locks.Check(space, nil, locks.Change{Path: at, Tree: c.Tree, Member: c.Member}); err != nil {
					return fmt.Errorf("%s: %w", c.Path, locks.ErrLocked)
				}
			}
			return nil
		}
	}
	// Serve returns when the client ends the subsystem, having closed its
	// open files; the channel stays open for the exit-status (no rs.Close,
	// which would close it).
	rs := sftp.NewRequestServer(ch, Handlers(tree, locked))
	if err := rs.Serve(); err != nil && !errors.Is(err, io.EOF) {
		s.Log.Error("sftp: session ended with an error", "user", user, "err", err)
		return 1
	}
	return 0
}

// sshString reads an SSH string (a uint32 length, then the bytes): the
// payload of subsystem and exec requests.
func sshString(b []byte) (string, bool) {
	if len(b) < 4 {
		return "", false
	}
	n := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
	if n != len(b)-4 {
		return "", false
	}
	return string(b[4:]), true
}

// attempt is what one connection's login callbacks saw.
type attempt struct {
	kexDone        func() // called when the key exchange is over, before the login
	passwordFailed atomic.Bool
	keyOffered     atomic.Bool  // a connection closed at the password prompt, having tried nothing, is no failure
	fault          atomic.Bool  // the server could not check (its users file): no failure of the client's
	user           atomic.Value // string: the user whose keys were offered
}

// idleConn ends a logged-in connection that sends nothing for idle.
type idleConn struct {
	net.Conn
	idle atomic.Int64 // a time.Duration; 0 until login
}

func (c *idleConn) Read(b []byte) (int, error) {
	if idle := time.Duration(c.idle.Load()); idle > 0 {
		c.Conn.SetReadDeadline(time.Now().Add(idle))
	}
	return c.Conn.Read(b)
}

// sshPackets is the guard.Framer of an SSH key exchange (RFC 4253): the
// client's version line, then binary packets in clear until NEWKEYS. The
// server works on the key-exchange method's messages (numbers 30 to 49:
// the client's key share above all); the others flow.
func sshPackets() guard.Framer {
	version := true
	return func(head []byte) (size int, gate, last bool, err error) {
		if version {
			i := bytes.IndexByte(head, '\n')
			if i < 0 {
				if len(head) > 8192 {
					return 0, false, false, errors.New("no SSH version line")
				}
				return 0, false, false, nil
			}
			version = !bytes.HasPrefix(head, []byte("SSH-"))
			return i + 1, false, false, nil
		}
		if len(head) < 6 {
			return 0, false, false, nil
		}
		const newKeys = 21
		msg := head[5]
		return 4 + int(binary.BigEndian.Uint32(head)), msg >= 30 && msg <= 49, msg == newKeys, nil
	}
}

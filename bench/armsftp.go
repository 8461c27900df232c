package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/measure"
)

// armLogins is how many SSH connections that only get a tiny file are
// counted per server: their median is the connection's cost (key exchange,
// login, SFTP session), taken off the bulk transfers.
const armLogins = 3

// sshClientKey is the user key both counted SSH servers authorize, an
// ed25519 key as OpenSSH's ssh-keygen makes by default.
type sshClientKey struct {
	signer     ssh.Signer
	private    ed25519.PrivateKey // for OpenSSH's client (privateFile)
	authorized string             // the authorized_keys file holding its public half
}

func newSSHClientKey(dir string) (*sshClientKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	k := &sshClientKey{signer: signer, private: priv, authorized: filepath.Join(dir, "authorized_keys")}
	return k, os.WriteFile(k.authorized, ssh.MarshalAuthorizedKey(signer.PublicKey()), 0o600)
}

// sftpSession is one SSH connection over c, as the bench counts them:
// curve25519-sha256, chacha20-poly1305@openssh.com, a public-key login as
// user, one SFTP session running f. It ends as a client should: EOF to
// the SFTP server, the session's exit status awaited, then the
// connection closed (a server that has to find its client gone on a
// write does other work, and the count would depend on the timing).
func sftpSession(c net.Conn, user string, key *sshClientKey, f func(*sftp.Client) error) error {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Minute)) // a wedged server fails the count, not hangs it
	sc, chans, reqs, err := ssh.NewClientConn(c, c.RemoteAddr().String(), &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(key.signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), // a throwaway key on loopback
		Config:          ssh.Config{Ciphers: []string{ssh.CipherChaCha20Poly1305}, KeyExchanges: []string{ssh.KeyExchangeCurve25519}},
	})
	if err != nil {
		return err
	}
	conn := ssh.NewClient(sc, chans, reqs)
	defer conn.Close()
	// The session channel by hand: its exit status, then its close, is
	// what a graceful end waits for (x/crypto's Session.Wait does not
	// serve subsystems).
	ch, reqs, err := conn.OpenChannel("session", nil)
	if err != nil {
		return err
	}
	status := make(chan int, 1)
	go func() {
		code := -1
		for r := range reqs { // until the server closes the channel
			var m struct{ Status uint32 }
			if r.Type == "exit-status" && ssh.Unmarshal(r.Payload, &m) == nil {
				code = int(m.Status)
			}
			if r.WantReply {
				r.Reply(false, nil)
			}
		}
		status <- code
	}()
	if ok, err := ch.SendRequest("subsystem", true, ssh.Marshal(struct{ Name string }{"sftp"})); err != nil || !ok {
		return fmt.Errorf("the SFTP subsystem refused (%v)", err)
	}
	s, err := sftp.NewClientPipe(ch, halfCloser{ch})
	if err != nil {
		return err
	}
	if err := f(s); err != nil {
		s.Close()
		return err
	}
	if err := s.Close(); err != nil { // EOF, then the server's end of the stream
		return fmt.Errorf("closing the SFTP session: %w", err)
	}
	if code := <-status; code != 0 {
		return fmt.Errorf("the SFTP session ended with exit status %d", code)
	}
	return nil
}

// halfCloser closes only its direction of a channel: EOF to the server.
type halfCloser struct{ ssh.Channel }

func (h halfCloser) Close() error { return h.CloseWrite() }

func sftpPut(name string, b []byte) func(*sftp.Client) error {
	return func(c *sftp.Client) error {
		f, err := c.Create(name)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, bytes.NewReader(b)); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
}

func sftpGet(name string, want int) func(*sftp.Client) error {
	return func(c *sftp.Client) error {
		f, err := c.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		n, err := io.Copy(io.Discard, f)
		if err == nil && n != int64(want) {
			err = fmt.Errorf("got %d bytes of %s, want %d", n, name, want)
		}
		return err
	}
}

// sftpSteps are the sessions both servers are counted over, each in a
// connection of its own, with the files in dir ("" for the user's root):
// a tiny put (warm-up), the bulk put, the bulk get, then armLogins tiny
// gets.
func sftpSteps(dir string) []func(*sftp.Client) error {
	body := bulkBody()
	tiny, big := filepath.Join(dir, "tiny.bin"), filepath.Join(dir, "big.bin")
	steps := []func(*sftp.Client) error{sftpPut(tiny, []byte("tiny\n")), sftpPut(big, body), sftpGet(big, len(body))}
	for range armLogins {
		steps = append(steps, sftpGet(tiny, 5))
	}
	return steps
}

// sftpFigures turns the counts of sftpSteps (instructions, by step) into
// million instructions per connection ("login") and per MiB put and got,
// the median connection taken off the bulk ones.
func sftpFigures(steps []float64) map[string]float64 {
	login := measure.Percentile(steps[3:], 50)
	return map[string]float64{
		"login": login / 1e6,
		"put":   (steps[1] - login) / armBulkMiB / 1e6,
		"get":   (steps[2] - login) / armBulkMiB / 1e6,
	}
}

// countGoSFTP runs one build of bench/armcost under qemu-arm and
// counts sftpSteps between markers it executes when no connection is open.
// The client is this program (x/crypto/ssh and github.com/pkg/sftp).
func countGoSFTP(ctx context.Context, o *options, plugin, bin, box string, key *sshClientKey) (map[string]float64, error) {
	a, err := startArmServer(ctx, o, plugin, bin, box)
	if err != nil {
		return nil, err
	}
	defer a.close()
	if a.sftpAddr == "" {
		return nil, fmt.Errorf("armcost served no SFTP")
	}
	steps := sftpSteps("")
	for i, step := range steps {
		if i > 0 {
			if err := a.say(fmt.Sprint("mark ", i)); err != nil {
				return nil, err
			}
		}
		c, err := net.Dial("tcp", a.sftpAddr)
		if err != nil {
			return nil, err
		}
		if err := sftpSession(c, "bench", key, step); err != nil {
			return nil, fmt.Errorf("SFTP session %d: %w", i, err)
		}
	}
	if err := a.say(fmt.Sprint("mark ", len(steps))); err != nil {
		return nil, err
	}
	marks, err := a.marks()
	if err != nil {
		return nil, err
	}
	counts := make([]float64, len(steps))
	for i := 1; i < len(steps); i++ {
		// Marker i+1 ends step i.
		if counts[i] = marks[i+1]; counts[i] == 0 {
			return nil, fmt.Errorf("no count for marker %d in %s", i+1, a.log)
		}
	}
	return sftpFigures(counts), nil
}

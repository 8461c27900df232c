package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/bench/flood"
)

// connTimeout bounds one connection, so a wedged server cannot hang the run.
const connTimeout = 30 * time.Second

// outcome is one connection as the client saw it.
type outcome struct {
	latency time.Duration
	resumed bool
	detail  string // what was negotiated, e.g. the TLS cipher suite
}

// conn makes one connection from the source address src.
type conn func(src net.IP) (outcome, error)

// sources hands out loopback source addresses, each to at most four
// connections. bonesync bans an address after five failed logins within ten
// minutes, and every SSH connection here ends in a refused login; without
// this the SFTP listener would be measured refusing a banned address. The
// same rotation is used for every server and protocol: loopback is
// 127.0.0.0/8, so this costs nothing.
type sources struct{ n atomic.Uint64 }

func (s *sources) next() net.IP {
	// From 127.1.0.0 on: below it, 127.0.x.y, are the floods' (bench/flood).
	return net.ParseIP(flood.Loopback(1<<16 + int(s.n.Add(1)/4)))
}

// result is one measured phase.
type result struct {
	latencies []time.Duration
	errors    int
	firstErr  string
	resumed   int
	elapsed   time.Duration
	detail    string
}

// drive runs clients connections at a time, each client opening its next
// connection when the previous one is done, for dur.
func drive(ctx context.Context, src *sources, clients int, dur time.Duration, c conn) result {
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(dur)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && time.Now().Before(end) {
				o, err := c(src.next())
				mu.Lock()
				if err != nil {
					res.errors++
					if res.firstErr == "" {
						res.firstErr = err.Error()
					}
				} else {
					res.latencies = append(res.latencies, o.latency)
					if o.resumed {
						res.resumed++
					}
					if res.detail == "" {
						res.detail = o.detail
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// tlsClient is the client configuration, as bonesync's own benchmark client
// has it: TLS 1.3, X25519 only (no post-quantum share), no certificate
// verification (a phone does that on its own CPU, not the box's; the
// handshake signature is still checked). With resume, tickets are kept in a
// session cache shared by the clients.
func tlsClient(resume bool) *tls.Config {
	cfg := &tls.Config{
		InsecureSkipVerify: true,
		ServerName:         "localhost",
		MinVersion:         tls.VersionTLS13,
		CurvePreferences:   []tls.CurveID{tls.X25519},
	}
	if resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(64)
	}
	return cfg
}

// httpsGet is one connection: TCP connect, TLS handshake, GET /ca.crt,
// the whole response. The latency ends with the last byte of the body; the
// client then waits for the server to close, so that each client has one
// connection at a time.
func httpsGet(addr string, cfg *tls.Config, want []byte) conn {
	req := "GET /ca.crt HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bonesync-bench\r\nConnection: close\r\n\r\n"
	return func(src net.IP) (outcome, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: connTimeout}
		t0 := time.Now()
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return outcome{}, err
		}
		defer c.Close()
		c.SetDeadline(t0.Add(connTimeout))
		tc := tls.Client(c, cfg)
		if err := tc.Handshake(); err != nil {
			return outcome{}, fmt.Errorf("handshake: %w", err)
		}
		if _, err := io.WriteString(tc, req); err != nil {
			return outcome{}, err
		}
		br := bufio.NewReader(tc)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return outcome{}, fmt.Errorf("response: %w", err)
		}
		body, err := io.ReadAll(resp.Body)
		lat := time.Since(t0)
		if err != nil {
			return outcome{}, fmt.Errorf("body: %w", err)
		}
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, want) {
			return outcome{}, fmt.Errorf("got %s with %d bytes, want 200 with the %d-byte file", resp.Status, len(body), len(want))
		}
		// The server closes (Connection: close); wait for it.
		if _, err := io.Copy(io.Discard, br); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return outcome{}, fmt.Errorf("close: %w", err)
		}
		st := tc.ConnectionState()
		return outcome{latency: lat, resumed: st.DidResume,
			detail: fmt.Sprintf("%s, %s", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))}, nil
	}
}

// sshLogin is one SSH connection up to the login's refusal: TCP connect,
// version exchange, curve25519-sha256 key exchange with the server's host
// key signature (checked against want), then the "none" and "publickey"
// attempts with a key the server does not accept. The latency ends when the
// server has refused the last method.
func sshLogin(addr string, client ssh.Signer, want ssh.PublicKey) conn {
	cfg := &ssh.ClientConfig{
		User: "root",
		Auth: []ssh.AuthMethod{ssh.PublicKeys(client)},
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			if !bytes.Equal(key.Marshal(), want.Marshal()) {
				return fmt.Errorf("host key %s, want %s", ssh.FingerprintSHA256(key), ssh.FingerprintSHA256(want))
			}
			return nil
		},
		HostKeyAlgorithms: []string{ssh.KeyAlgoED25519},
		Config: ssh.Config{
			KeyExchanges: []string{ssh.KeyExchangeCurve25519},
			Ciphers:      []string{ssh.CipherAES128GCM},
		},
		Timeout: connTimeout,
	}
	return func(src net.IP) (outcome, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: connTimeout}
		t0 := time.Now()
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return outcome{}, err
		}
		defer c.Close()
		c.SetDeadline(t0.Add(connTimeout))
		sc, _, _, err := ssh.NewClientConn(c, addr, cfg)
		lat := time.Since(t0)
		if err == nil {
			sc.Close()
			return outcome{}, errors.New("the login was accepted; it should have been refused")
		}
		if !strings.Contains(err.Error(), "unable to authenticate") {
			return outcome{}, err
		}
		return outcome{latency: lat, detail: "curve25519-sha256, ssh-ed25519, aes128-gcm@openssh.com"}, nil
	}
}

package measure

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"runtime"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// server is a loopback listener that serves handshakes for one candidate and
// records the CPU time each one took on the server side.
type server struct {
	ln     net.Listener
	handle func(net.Conn) (sample, error)
	wg     sync.WaitGroup

	mu      sync.Mutex
	samples []sample
	errs    int
	serving int // connections accepted whose handshake is not yet recorded
}

// sample is the server's view of one handshake.
type sample struct {
	cpu     time.Duration
	resumed bool
}

func listen(handle func(net.Conn) (sample, error)) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench listener: %w", err)
	}
	s := &server{ln: ln, handle: handle}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

func (s *server) addr() string { return s.ln.Addr().String() }

func (s *server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		s.mu.Lock()
		s.serving++
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer c.Close()
			c.SetDeadline(time.Now().Add(handshakeTimeout))
			// Pin the goroutine to its thread so that the thread's CPU
			// clock counts this handshake's work and nothing else's.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			smp, err := s.handle(c)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.serving--
			if err != nil {
				s.errs++
				return
			}
			s.samples = append(s.samples, smp)
		}()
	}
}

// settle waits, at most d, until every accepted connection's handshake is
// recorded: the clients have their replies a moment before the server's
// threads have recorded their samples. It returns how many were not.
func (s *server) settle(d time.Duration) int {
	for end := time.Now().Add(d); ; time.Sleep(time.Millisecond) {
		s.mu.Lock()
		n := s.serving
		s.mu.Unlock()
		if n == 0 || time.Now().After(end) {
			return n
		}
	}
}

// take returns the CPU time of the handshakes served since the last take,
// resumed ones or full ones, and clears the record.
func (s *server) take(resumed bool) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cpu []time.Duration
	for _, smp := range s.samples {
		if smp.resumed == resumed {
			cpu = append(cpu, smp.cpu)
		}
	}
	s.samples = nil
	return cpu
}

func (s *server) close() {
	s.ln.Close()
	s.wg.Wait()
}

// tlsServer serves TLS with key and the given key exchange group, the way the
// real server does (TLS 1.2 and up, session tickets on).
func tlsServer(key crypto.Signer, kex string) (*server, error) {
	chain, err := benchChain(key)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		Certificates:     []tls.Certificate{chain},
		MinVersion:       tls.VersionTLS12,
		CurvePreferences: []tls.CurveID{curveID(kex)},
	}
	return listen(func(c net.Conn) (sample, error) {
		tc := tls.Server(c, cfg)
		t0 := threadCPU()
		// Handshake includes sending the TLS 1.3 session tickets.
		if err := tc.Handshake(); err != nil {
			return sample{}, err
		}
		smp := sample{cpu: threadCPU() - t0, resumed: tc.ConnectionState().DidResume}
		var b [1]byte
		if _, err := io.ReadFull(tc, b[:]); err != nil {
			return sample{}, err
		}
		_, err := tc.Write(b[:])
		return smp, err
	})
}

// sshServer serves the SSH handshake (key exchange, host key signature and a
// "none" authentication) with key as the host key.
func sshServer(key crypto.Signer, algo, kex string) (*server, error) {
	signer, err := ssh.NewSignerFromSigner(key)
	if err != nil {
		return nil, err
	}
	if as, ok := signer.(ssh.AlgorithmSigner); ok {
		signer, err = ssh.NewSignerWithAlgorithms(as, []string{algo})
		if err != nil {
			return nil, err
		}
	}
	cfg := &ssh.ServerConfig{NoClientAuth: true, Config: ssh.Config{KeyExchanges: []string{kex}}}
	cfg.AddHostKey(signer)
	return listen(func(c net.Conn) (sample, error) {
		// x/crypto/ssh runs the key exchange on goroutines of its own, so
		// this goroutine's thread clock would miss it: take the whole
		// process's CPU time instead. It is this handshake's alone only
		// when handshakes do not overlap, so the session keeps these
		// samples from one-client phases only.
		t0 := processCPU()
		sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
		if err != nil {
			return sample{}, err
		}
		cpu := processCPU() - t0
		go ssh.DiscardRequests(reqs)
		go func() {
			for ch := range chans {
				ch.Reject(ssh.Prohibited, "bench")
			}
		}()
		sc.Wait()
		return sample{cpu: cpu}, nil
	})
}

var (
	benchCAOnce sync.Once
	benchCA     *x509.Certificate
	benchCAKey  *ecdsa.PrivateKey
	benchCAErr  error
)

// benchChain issues a throwaway certificate for key from a throwaway P-384
// CA, so the server sends the same shape of chain as the real one (leaf + a
// P-384 root).
func benchChain(key crypto.Signer) (tls.Certificate, error) {
	benchCAOnce.Do(func() {
		benchCAKey, benchCAErr = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		if benchCAErr != nil {
			return
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bonesync bench CA"},
			NotBefore: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, benchCAKey.Public(), benchCAKey)
		if err != nil {
			benchCAErr = err
			return
		}
		benchCA, benchCAErr = x509.ParseCertificate(der)
	})
	if benchCAErr != nil {
		return tls.Certificate{}, fmt.Errorf("bench CA: %w", benchCAErr)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "bonesync.bench"},
		DNSNames:  []string{"bonesync.bench"},
		NotBefore: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, benchCA, key.Public(), benchCAKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("bench certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der, benchCA.Raw}, PrivateKey: key}, nil
}

package probe

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Against a server that is not a bonesync box (Go's own test TLS server):
// every level's figures, no failures, and no prediction, said why.
func TestHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }))
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	r, err := Run(context.Background(), Options{Target: srv.URL + "/", Users: []int{1, 3}, Rounds: 2, RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Levels) != 2 || r.Proto != "HTTPS" {
		t.Fatalf("%+v", r)
	}
	for _, l := range r.Levels {
		if l.Failures != 0 || l.Handshake.N != l.Users*2 || l.FirstByte.P50 < l.Handshake.P50 || l.Handshake.P50 < l.Connect.P50 {
			t.Errorf("level %d: %+v", l.Users, l)
		}
	}
	if r.Prediction != nil || !strings.Contains(r.Note, "not a bonesync") {
		t.Errorf("prediction %+v, note %q", r.Prediction, r.Note)
	}
	var out strings.Builder
	r.Text(&out)
	for _, want := range []string{"HTTPS probe of " + srv.URL, "0 of 2", "0 of 6", "handshake p95"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, out.String())
		}
	}
}

// Against an SSH server (x/crypto's, refusing every login): the banner
// and the key exchange are timed, the login offers nothing, and a port
// where nothing listens gives failures, not figures.
func TestSFTP(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(priv)
	cfg := &ssh.ServerConfig{PasswordCallback: func(ssh.ConnMetadata, []byte) (*ssh.Permissions, error) {
		t.Error("the probe tried a password")
		return nil, errors.New("no")
	}}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { ssh.NewServerConn(c, cfg); c.Close() }()
		}
	}()
	r, err := Run(context.Background(), Options{Target: "sftp://" + ln.Addr().String(), Users: []int{2}, Rounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	l := r.Levels[0]
	if l.Failures != 0 || l.Handshake.N != 4 || l.FirstByte.P50 <= 0 || l.FirstByte.P50 > l.Handshake.P50 {
		t.Errorf("%+v (%s)", l, l.Failure)
	}
	if !strings.Contains(r.Note, "-report") {
		t.Errorf("note %q", r.Note)
	}
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := closed.Addr().String()
	closed.Close()
	r, err = Run(context.Background(), Options{Target: "sftp://" + addr, Users: []int{1}, Rounds: 2, Timeout: 5 * time.Second})
	if err != nil || r.Levels[0].Failures != 2 || !strings.Contains(r.Levels[0].Failure, "refused") {
		t.Errorf("a closed port: %+v, %v", r.Levels, err)
	}
}

func TestBadTargets(t *testing.T) {
	for _, bad := range []string{"", "box.local", "ftp://box/", "https://"} {
		if _, err := Run(context.Background(), Options{Target: bad}); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

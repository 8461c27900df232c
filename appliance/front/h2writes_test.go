package front

import (
	"bytes"
	"crypto/tls"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

type bigFile []byte

func (f bigFile) Routes(rs *Routes) {
	rs.Public("GET /big", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "big", time.Time{}, bytes.NewReader(f))
	})
	rs.Public("GET /flush", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
			io.WriteString(w, ", flushed")
		}
	})
}

// memory grants or refuses, and counts.
type memory struct {
	mu                     sync.Mutex
	grant                  bool
	asked, given, released int
	sizes                  []int64
}

func (m *memory) TryTake(kind string, n int64) (func(), bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked++
	m.sizes = append(m.sizes, n)
	if !m.grant {
		return nil, false
	}
	m.given++
	return func() { m.mu.Lock(); m.released++; m.mu.Unlock() }, true
}

// Over HTTP/2 a copied body is written in copyChunk pieces from a buffer
// the budget grants and gets back; without room it is copied as io.Copy
// does; over HTTP/1.1 the budget is not asked. The body arrives whole
// each way, and a handler still finds its Flusher.
func TestHTTP2BigWrites(t *testing.T) {
	b := newBox(t)
	body := make([]byte, 1<<20+12345)
	for i := range body {
		body[i] = byte(rand.Uint32())
	}
	mem := &memory{}
	cert := leaf(t, b.ca)
	cfg := TLSConfig(func() []tls.Certificate { return []tls.Certificate{*cert} }, func() bool { return false }, time.Now)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: HTTPS(b, "8080", mem, nil, bigFile(body)), TLSConfig: cfg, ErrorLog: log.New(io.Discard, "", 0)}
	go srv.Serve(tls.NewListener(ln, cfg))
	t.Cleanup(func() { srv.Close() })
	s := &server{ca: b.ca}
	for _, tc := range []struct {
		h2, grant bool
		asked     int
	}{{true, true, 1}, {true, false, 1}, {false, true, 0}} {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: s.client(), ForceAttemptHTTP2: tc.h2}}
		mem.mu.Lock()
		mem.grant, mem.asked, mem.given, mem.released, mem.sizes = tc.grant, 0, 0, 0, nil
		mem.mu.Unlock()
		resp, err := c.Get("https://" + ln.Addr().String() + "/big")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("HTTP/%d, granted %v: %d bytes (%v), want the file's %d", resp.ProtoMajor, tc.grant, len(got), err, len(body))
		}
		mem.mu.Lock()
		if mem.asked != tc.asked || mem.given != mem.released || tc.asked > 0 && mem.sizes[0] != copyChunk {
			t.Errorf("HTTP/%d, granted %v: asked %d times for %v, given %d, released %d; want asked %d for %d, all released",
				resp.ProtoMajor, tc.grant, mem.asked, mem.sizes, mem.given, mem.released, tc.asked, copyChunk)
		}
		mem.mu.Unlock()
		if tc.h2 {
			resp, err := c.Get("https://" + ln.Addr().String() + "/flush")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(got) != "first, flushed" {
				t.Errorf("GET /flush = %q, want the handler to find a Flusher", got)
			}
		}
		c.CloseIdleConnections()
	}
}

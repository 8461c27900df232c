package guard

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// lengthPrefixed frames messages as one length byte, then a type byte that
// is 1 for a costly message, then the rest.
func lengthPrefixed(head []byte) (int, bool, bool, error) {
	if len(head) < 2 {
		return 0, false, false, nil
	}
	return int(head[0]), head[1] == 1, head[1] == 9, nil
}

func TestGate(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	lim := NewLimiter(1, time.Second)
	g := NewGate(context.Background(), server, lim, lengthPrefixed)
	defer g.Close()
	got := make(chan []byte)
	read := func(n int) {
		b := make([]byte, n)
		_, err := io.ReadFull(g, b)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}
	// A message the server does no work on flows as it comes.
	go read(2)
	client.Write([]byte{4, 0})
	<-got
	go read(2)
	client.Write([]byte{7, 7})
	<-got
	if g.Holding() {
		t.Fatal("a plain message took a slot")
	}
	// A costly message is delivered only whole, and only with a slot.
	go read(6)
	client.Write([]byte{6, 1, 'a'})
	time.Sleep(50 * time.Millisecond)
	select {
	case b := <-got:
		t.Fatalf("part of a costly message was delivered: %q", b)
	default:
	}
	if g.Holding() || lim.InFlight() != 0 {
		t.Fatal("a slot was taken before the message was complete")
	}
	client.Write([]byte{'b', 'c', 'd'})
	if b := <-got; string(b[2:]) != "abcd" {
		t.Fatalf("delivered %q", b)
	}
	if !g.Holding() || lim.InFlight() != 1 {
		t.Fatal("the complete costly message holds no slot")
	}
	// The next read means the server is done with it: the slot goes back.
	go read(2)
	for end := time.Now().Add(10 * time.Second); g.Holding() || lim.InFlight() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the slot was kept while the server waits for the client")
		}
	}
	client.Write([]byte{2, 9}) // the last framed message
	<-got
	go read(5)
	client.Write([]byte("hello")) // after it, bytes pass as they are
	if b := <-got; string(b) != "hello" {
		t.Fatalf("after the framing: %q", b)
	}
}

// With the only slot taken, a costly message waits for it and then fails
// the read; an oversized message is refused without being read.
func TestGateNoSlot(t *testing.T) {
	lim := NewLimiter(1, 50*time.Millisecond)
	lim.Acquire(context.Background())
	client, server := net.Pipe()
	defer client.Close()
	g := NewGate(context.Background(), server, lim, lengthPrefixed)
	go client.Write([]byte{3, 1, 'x'})
	if _, err := g.Read(make([]byte, 10)); err != ErrNoSlot {
		t.Fatalf("read %v, want ErrNoSlot", err)
	}
	huge := NewGate(context.Background(), server, lim, func([]byte) (int, bool, bool, error) { return 1 << 20, true, false, nil })
	if _, err := huge.Read(make([]byte, 10)); err == nil {
		t.Fatal("a 1 MiB handshake message was accepted")
	}
}

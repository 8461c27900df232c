package sftpd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

// The host key a client gets is the chosen one whenever it takes it: the
// other family's (choose.Other) only for a client that does not. An SSH
// client picks among the server's host keys by its own order, and Go's
// (rclone's SFTP, most Go tools) puts RSA before Ed25519: offered both,
// those would take the costlier RSA key, and a known_hosts that holds the
// box's Ed25519 key would no longer match. x/crypto's server has no hook
// to choose per client, so hello reads the client's version line and its
// key exchange offer (SSH_MSG_KEXINIT, in the clear) before x/crypto
// does, having sent the server's version line itself, and gives both
// back to x/crypto unchanged.

// hello is a connection whose first bytes were read ahead (in, given back
// to the first reads) and whose version line was already sent (out,
// dropped from the first write, which x/crypto makes of exactly it).
type hello struct {
	net.Conn
	in  []byte
	out []byte
}

func (h *hello) Read(b []byte) (int, error) {
	if len(h.in) > 0 {
		n := copy(b, h.in)
		h.in = h.in[n:]
		return n, nil
	}
	return h.Conn.Read(b)
}

func (h *hello) Write(b []byte) (int, error) {
	if h.out != nil {
		if !bytes.HasPrefix(b, h.out) {
			return 0, errors.New("sftpd: the server's version line differs from the one already sent")
		}
		rest := b[len(h.out):]
		h.out = nil
		if len(rest) == 0 {
			return len(b), nil
		}
		n, err := h.Conn.Write(rest)
		return n + len(b) - len(rest), err
	}
	return h.Conn.Write(b)
}

// Limits on what is read ahead: RFC 4253 lets a server send lines before
// its version, not a client, but some do; a KEXINIT is a few KiB.
const (
	maxVersionBytes = 8 << 10
	maxKexInitBytes = 64 << 10
	msgKexInit      = 20
)

// readHello sends version (the server's line, without CRLF), then reads
// the client's version line and first packet through c, and returns the
// connection to hand to x/crypto and the host key algorithms the client
// offered, in its order.
func readHello(c net.Conn, version string) (*hello, []string, error) {
	line := []byte(version + "\r\n")
	if _, err := c.Write(line); err != nil {
		return nil, nil, err
	}
	h := &hello{Conn: c, out: line}
	var buf []byte
	// The client's version line (and any lines before it), byte by byte,
	// as x/crypto reads it: nothing past it is taken from the socket.
	var b [1]byte
	for {
		if len(buf) > maxVersionBytes {
			return nil, nil, errors.New("no SSH version line from the client")
		}
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return nil, nil, err
		}
		buf = append(buf, b[0])
		if b[0] == '\n' {
			start := bytes.LastIndexByte(buf[:len(buf)-1], '\n') + 1
			if bytes.HasPrefix(buf[start:], []byte("SSH-")) {
				break
			}
		}
	}
	// The first packet: uint32 length, padding length, payload, padding.
	var lenb [4]byte
	if _, err := io.ReadFull(c, lenb[:]); err != nil {
		h.in = buf
		return h, nil, err
	}
	n := binary.BigEndian.Uint32(lenb[:])
	buf = append(buf, lenb[:]...)
	if n < 2 || n > maxKexInitBytes {
		h.in = buf
		return h, nil, fmt.Errorf("a first packet of %d bytes", n)
	}
	pkt := make([]byte, n)
	if _, err := io.ReadFull(c, pkt); err != nil {
		return nil, nil, err
	}
	h.in = append(buf, pkt...)
	pad := int(pkt[0])
	if 1+pad > len(pkt) {
		return h, nil, errors.New("a first packet with more padding than bytes")
	}
	algos, err := kexInitHostKeys(pkt[1 : len(pkt)-pad])
	return h, algos, err
}

// kexInitHostKeys reads server_host_key_algorithms from a KEXINIT payload.
func kexInitHostKeys(p []byte) ([]string, error) {
	if len(p) < 1+16 || p[0] != msgKexInit {
		return nil, errors.New("the client's first packet is not its key exchange offer")
	}
	p = p[1+16:] // the type and the cookie
	for i := 0; i < 2; i++ {
		if len(p) < 4 {
			return nil, errors.New("a short key exchange offer")
		}
		l := binary.BigEndian.Uint32(p)
		if uint64(len(p)-4) < uint64(l) {
			return nil, errors.New("a short key exchange offer")
		}
		if i == 1 {
			return strings.Split(string(p[4:4+l]), ","), nil
		}
		p = p[4+l:] // kex_algorithms
	}
	return nil, nil
}

// hostKeysFor is the host keys to offer a client that offered algos:
// the chosen key (keys[0]) alone when the client takes one of its
// algorithms, else all of them (and x/crypto agrees on the one the client
// takes, if any).
func hostKeysFor(keys []ssh.Signer, algos []string) []ssh.Signer {
	if len(keys) < 2 || algos == nil {
		return keys
	}
	for _, a := range signerAlgorithms(keys[0]) {
		if slices.Contains(algos, a) {
			return keys[:1]
		}
	}
	return keys
}

// signerAlgorithms are the signature algorithms a host key signer offers.
func signerAlgorithms(s ssh.Signer) []string {
	if m, ok := s.(ssh.MultiAlgorithmSigner); ok {
		return m.Algorithms()
	}
	return []string{s.PublicKey().Type()}
}

// Package listen is the box's ports: one row per protocol (Ports), the
// flags that move them, what PID 1 announces for them over mDNS, and the
// sockets themselves (Open): those systemd passed (bonesync.socket), else
// bound here. What the box prints and announces comes from the listeners
// it got, never from the flags: under the socket unit SFTP is on 2222.
//
// A new protocol is a row of Ports, a field of Listeners (and its line in
// fields), a ListenStream line in systemd/bonesync.socket (a test holds the
// two together), and its own package wired in package server.
package listen

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/bonesync/bonesync/appliance/sysd"
)

// Port is one of the box's ports.
type Port struct {
	// Name is the port's flag (-https), its socket's name under systemd
	// (FileDescriptorName=) and its name in the logs.
	Name string
	// Default is where it listens unless a flag says otherwise: on the
	// board always.
	Default string
	// Usage is the flag's help.
	Usage string
	// Announce are the DNS-SD services PID 1 announces on it.
	Announce []Service
}

// Service is a DNS-SD service type and its TXT strings.
type Service struct {
	Type string
	Text []string
}

// The box's ports.
var (
	HTTPS = Port{Name: "https", Default: ":443", Usage: "HTTPS listen address", Announce: []Service{
		{Type: "_https._tcp", Text: []string{"path=/"}},
		// _webdavs: WebDAV over TLS (RFC 6763's registry). Clients that
		// find _webdav try plain HTTP, which answers nothing but a redirect.
		{Type: "_webdavs._tcp", Text: []string{"path=/dav/"}},
	}}
	HTTP = Port{Name: "http", Default: ":80", Usage: "plain-HTTP listen address (CA download and redirect only)"}
	SSH  = Port{Name: "ssh", Default: ":22", Usage: "SFTP listen address", Announce: []Service{{Type: "_sftp-ssh._tcp"}}}
)

// Ports are the box's ports, in the order of the socket unit's
// ListenStream lines (the order systemd passes them in when it names
// none).
var Ports = []Port{HTTPS, HTTP, SSH}

// DefaultPort is the port number of p's default address.
func (p Port) DefaultPort() int {
	_, port, _ := net.SplitHostPort(p.Default)
	n, _ := strconv.Atoi(port)
	return n
}

// Listeners are the box's listening sockets.
type Listeners struct {
	HTTPS, HTTP, SSH net.Listener
}

// fields are the listeners in the order of Ports.
func (l *Listeners) fields() []*net.Listener { return []*net.Listener{&l.HTTPS, &l.HTTP, &l.SSH} }

// Open returns the listeners: the sockets systemd passed, if it passed
// any, else new ones at addrs (by port name; a port not named listens at
// its Default). A port that cannot be had closes the others and says
// which.
func Open(addrs map[string]string) (*Listeners, error) {
	names := make([]string, len(Ports))
	for i, p := range Ports {
		names[i] = p.Name
	}
	passed, err := sysd.Listeners(names)
	if err != nil {
		return nil, err
	}
	l := &Listeners{}
	for i, p := range Ports {
		ln := passed[p.Name]
		switch {
		case passed != nil && ln == nil:
			err = fmt.Errorf("socket activation passed no %s socket", p.Name)
		case passed == nil:
			addr := addrs[p.Name]
			if addr == "" {
				addr = p.Default
			}
			if ln, err = net.Listen("tcp", addr); err != nil {
				err = fmt.Errorf("%s: listen on %s: %w (another server there? pass -%s to move it)", p.Name, addr, err, p.Name)
			}
		}
		if err != nil {
			l.Close()
			for _, ln := range passed {
				ln.Close()
			}
			return nil, err
		}
		*l.fields()[i] = ln
	}
	return l, nil
}

// Addrs are where each port listens, by port name.
func (l *Listeners) Addrs() map[string]string {
	m := map[string]string{}
	for i, p := range Ports {
		if ln := *l.fields()[i]; ln != nil {
			m[p.Name] = ln.Addr().String()
		}
	}
	return m
}

// Close closes every listener.
func (l *Listeners) Close() error {
	var errs []error
	for _, ln := range l.fields() {
		if *ln != nil {
			if err := (*ln).Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// PortOf is the port number ln listens on.
func PortOf(ln net.Listener) int {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	n, _ := strconv.Atoi(port)
	return n
}

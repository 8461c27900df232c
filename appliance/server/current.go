package server

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"sync"

	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/report"
)

// current holds what is being served: the CA, keys, certificate and
// report, swapped whole when the watcher or "measure again" brings new
// ones. Every reader asks it per use, so the next handshake or page has the
// new ones.
type current struct {
	mu  sync.RWMutex
	box *provision.Box // its Report nil: it is in report
	// report is the box's report as JSON, parsed when a page asks for
	// it: parsed, its thousands of small values would be a tenth of a
	// serving box's live heap, which every collection walks.
	report []byte
	// kept is the parsed report, for one whose JSON does not parse back
	// (never expected: set checks).
	kept *report.Report
	// urls are this server's, from the ports it got: the report it
	// shows carries them, whatever the report on disk says.
	urls []string
}

func newCurrent(b *provision.Box, urls []string) *current {
	c := &current{urls: urls}
	c.set(b)
	return c
}

func (c *current) get() *provision.Box {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.box
}

func (c *current) set(b *provision.Box) {
	enc, err := b.Report.JSON()
	if err == nil {
		var compact bytes.Buffer // the file's indentation is a third of it
		if err = json.Compact(&compact, enc); err == nil {
			enc = bytes.Clone(compact.Bytes())
			_, err = report.Parse(enc)
		}
	}
	kept := b.Report
	if err == nil {
		kept = nil
	} else {
		enc = nil
	}
	box := *b
	box.Report = nil
	c.mu.Lock()
	defer c.mu.Unlock()
	c.box, c.report, c.kept = &box, enc, kept
}

// certificates are the chosen key's certificate, then the other
// family's (front.TLSConfig picks per client).
func (c *current) certificates() []tls.Certificate {
	b := c.get()
	certs := []tls.Certificate{*b.Server.TLSCertificate(b.CA)}
	if b.OtherServer != nil {
		certs = append(certs, *b.OtherServer.TLSCertificate(b.CA))
	}
	return certs
}

// hostKeys are the chosen SSH host key, then the other family's.
func (c *current) hostKeys() []crypto.Signer {
	b := c.get()
	if b.OtherSSHKey != nil {
		return []crypto.Signer{b.SSHKey, b.OtherSSHKey}
	}
	return []crypto.Signer{b.SSHKey}
}

func (c *current) postQuantum() bool         { return c.get().Choice.TLSPostQuantum }
func (c *current) CACert() *x509.Certificate { return c.get().CA.Cert }

// Report is the report as this server shows it: with its own URLs.
func (c *current) Report() *report.Report {
	c.mu.RLock()
	enc, kept := c.report, c.kept
	c.mu.RUnlock()
	r := &report.Report{}
	if kept != nil {
		*r = *kept
	} else if p, err := report.Parse(enc); err == nil { // set parsed these bytes
		r = p
	}
	r.URLs = c.urls
	return r
}

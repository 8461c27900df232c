package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/bonesync/bonesync/appliance/copies"
)

// checkHostKey checks, before each run, the host key the SFTP target at
// host (host:port) offers against the ones pinned at file (known_hosts
// form). A host not pinned yet (the first run, or a new target) has its
// key pinned; a host pinned with another key is a *copies.HostKeyChanged,
// with both keys' fingerprints, which the run records (the engine's own
// check, with the same file, would only say "knownhosts: key mismatch").
func checkHostKey(host, file string) error {
	key, remote, err := offeredHostKey(host)
	if err != nil {
		return err
	}
	pinned, err := knownhosts.New(file)
	if errors.Is(err, os.ErrNotExist) {
		return pinHostKey(file, host, key)
	}
	if err != nil {
		return fmt.Errorf("the SFTP target's pinned host keys %s: %w", file, err)
	}
	err = pinned(host, remote, key)
	var ke *knownhosts.KeyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ke) && len(ke.Want) == 0: // a new target
		return pinHostKey(file, host, key)
	case errors.As(err, &ke):
		was := ke.Want[0].Key
		for _, w := range ke.Want {
			if w.Key.Type() == key.Type() {
				was = w.Key
			}
		}
		return &copies.HostKeyChanged{Host: host, Pinned: fingerprint(was), Offered: fingerprint(key),
			Key: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))}
	default:
		return fmt.Errorf("the SFTP target %s's host key: %w", host, err)
	}
}

// offeredHostKey is the host key the SSH server at host offers, and its
// address; the handshake goes no further.
func offeredHostKey(host string) (ssh.PublicKey, net.Addr, error) {
	var key ssh.PublicKey
	var remote net.Addr
	cfg := &ssh.ClientConfig{
		User: "bonesync-pin",
		HostKeyCallback: func(_ string, a net.Addr, k ssh.PublicKey) error {
			key, remote = k, a
			return errSeen
		},
		Timeout: 15 * time.Second,
	}
	c, err := ssh.Dial("tcp", host, cfg)
	if c != nil {
		c.Close()
	}
	if key == nil {
		return nil, nil, fmt.Errorf("the SFTP target %s: %w", host, err)
	}
	return key, remote, nil
}

var errSeen = errors.New("host key seen")

// fingerprint is key's as ssh-keygen -lf prints it: SHA256:... (TYPE).
func fingerprint(key ssh.PublicKey) string {
	kind := strings.ToUpper(strings.TrimPrefix(key.Type(), "ssh-"))
	if strings.HasPrefix(kind, "ECDSA") {
		kind = "ECDSA"
	}
	return ssh.FingerprintSHA256(key) + " (" + kind + ")"
}

// pinHostKey pins key as host's at file (known_hosts form), in place of
// any line that names host; the other lines are kept.
func pinHostKey(file, host string, key ssh.PublicKey) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("the SFTP target's pinned host keys: %w", err)
	}
	name := knownhosts.Normalize(host)
	var b bytes.Buffer
	for sc := bufio.NewScanner(bytes.NewReader(old)); sc.Scan(); {
		if line := sc.Text(); !names(line, name) {
			b.WriteString(line + "\n")
		}
	}
	b.WriteString(knownhosts.Line([]string{name}, key) + "\n")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("the SFTP target's pinned host keys: %w", err)
	}
	if err := writeFile(file, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
		return fmt.Errorf("pin the SFTP target's host key: %w", err)
	}
	return nil
}

// names says whether line (known_hosts form) pins a key for the host
// named name (knownhosts.Normalize).
func names(line, name string) bool {
	_, hosts, _, _, _, err := ssh.ParseKnownHosts([]byte(line))
	return err == nil && slices.Contains(hosts, name)
}

// AcceptHostKey pins the host key the SFTP target offered at the last run,
// which was refused for it (copies.Status.HostKey, in dir: copies.Dir), in
// place of the one pinned; the next run goes on. offered is the new key's
// fingerprint as the one accepting was shown it (SHA256:..., its type may
// be left out): another is refused, nothing pinned (every caller shows
// the key before it asks). It takes the runs' lock: not while a run goes
// on.
func AcceptHostKey(dir, offered string) (copies.HostKeyChanged, error) {
	unlock, err := copies.Lock(dir)
	if err != nil {
		return copies.HostKeyChanged{}, err
	}
	defer unlock()
	st, ok := copies.ReadStatus(dir)
	if !ok || st.HostKey == nil {
		return copies.HostKeyChanged{}, errors.New("the last copy found no changed host key: there is none to accept")
	}
	ch := *st.HostKey
	want, _, _ := strings.Cut(strings.TrimSpace(offered), " ")
	if have, _, _ := strings.Cut(ch.Offered, " "); want != have {
		return ch, fmt.Errorf("the SFTP target %s offered %s at the last run, not %s: nothing accepted", ch.Host, ch.Offered, want)
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(ch.Key))
	if err != nil || fingerprint(key) != ch.Offered {
		return ch, fmt.Errorf("the SFTP target %s's recorded key is not the one shown (%s): nothing accepted; run a copy to record it again", ch.Host, ch.Offered)
	}
	if err := pinHostKey(copies.KnownHosts(dir), ch.Host, key); err != nil {
		return ch, err
	}
	st.HostKey = nil
	st.Error = fmt.Sprintf("the SFTP target %s's new host key %s was accepted: the next run goes on", ch.Host, ch.Offered)
	if err := copies.WriteStatus(dir, st); err != nil {
		return ch, fmt.Errorf("the new key is pinned, but the copy's status was not kept: %w", err)
	}
	return ch, nil
}

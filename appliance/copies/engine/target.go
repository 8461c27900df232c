package engine

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/x509roots/fallback/bundle"

	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/copies/s3"

	// The engine's parts that copies use: its sync and crypt, and the
	// targets a household has (a disk, an SFTP server, a second box; an
	// S3-compatible store through appliance/copies/s3).
	_ "github.com/rclone/rclone/backend/crypt"
	_ "github.com/rclone/rclone/backend/local"
	_ "github.com/rclone/rclone/backend/sftp"
	_ "github.com/rclone/rclone/backend/webdav"
	"github.com/rclone/rclone/fs"
	"github.com/rclone/rclone/fs/cache"
	"github.com/rclone/rclone/fs/config"
	"github.com/rclone/rclone/fs/config/obscure"
)

// The engine's names (rclone's config sections, in memory only) for the
// target and for the encrypted copy on it.
const (
	targetRemote = "bonesync-target"
	copyRemote   = "bonesync-copy"
)

// configure tells the engine of the target and the copy on it, and
// returns the copy's root ("bonesync-copy:").
func configure(st copies.Settings) (string, error) {
	t, err := copies.ParseTarget(st.Target)
	if err != nil {
		return "", err
	}
	if st.Password == "" {
		return "", errors.New("no encryption password")
	}
	remote := t.Path
	// The engine keeps the Fs it made for a remote's name; the names stay
	// while the owner's settings (a password, a key) may have changed.
	cache.ClearConfig(targetRemote)
	cache.ClearConfig(copyRemote)
	config.Data().DeleteSection(targetRemote)
	set := func(k, v string) { config.FileSetValue(targetRemote, k, v) }
	switch t.Kind {
	case "sftp":
		host, port, _ := net.SplitHostPort(t.Host)
		set("type", "sftp")
		set("host", host)
		set("port", port)
		set("user", t.User)
		if st.TargetPassword != "" {
			set("pass", obscure.MustObscure(st.TargetPassword))
		} else {
			set("key_file", st.Key)
		}
		if st.KnownHosts != "" {
			if err := checkHostKey(t.Host, st.KnownHosts); err != nil {
				return "", err
			}
			set("known_hosts_file", st.KnownHosts)
		}
		set("set_modtime", "true")
		// The target's own commands are not needed: no shell is assumed.
		set("shell_type", "none")
		set("disable_hashcheck", "true")
		for k, v := range sftpMemory {
			set(k, v)
		}
		remote = targetRemote + ":" + t.Path
	case "webdav":
		set("type", "webdav")
		set("url", t.URL)
		set("vendor", "owncloud") // dates by X-OC-Mtime, as the box and Nextcloud take them
		set("user", t.User)
		if st.TargetPassword != "" {
			set("pass", obscure.MustObscure(st.TargetPassword))
		}
		remote = targetRemote + ":" + t.Path
	case "s3":
		if st.TargetPassword == "" {
			return "", errors.New("an S3 target needs its secret key in copy_target_password")
		}
		set("type", s3.Type)
		set("endpoint", t.URL)
		set("access_key_id", t.User)
		set("secret_access_key", st.TargetPassword)
		set("region", t.Region)
		remote = targetRemote + ":" + t.Path
	}
	config.Data().DeleteSection(copyRemote)
	for k, v := range map[string]string{
		"type": "crypt", "remote": remote, "password": obscure.MustObscure(st.Password),
		"filename_encryption": "standard", "directory_name_encryption": "true",
	} {
		config.FileSetValue(copyRemote, k, v)
	}
	return copyRemote + ":", nil
}

// KeyFile makes, if missing, the box's SSH key for SFTP targets at file,
// and returns its public half (authorized_keys form), for the owner to
// give the target.
func KeyFile(file string) (string, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return "", err
		}
		block, err := ssh.MarshalPrivateKey(priv, "bonesync copies")
		if err != nil {
			return "", err
		}
		data = pem.EncodeToMemory(block)
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return "", err
		}
		if err := writeFile(file, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))) + " bonesync-copies", nil
}

// pinCA records, the first time, the certificate authority at the top of
// the chain the HTTPS target at host presents, as PEM at file, when the
// public roots do not vouch for it (a bonesync box's own CA, a store on
// the home network): runs then trust only that, as the SFTP target's host
// key is pinned. A chain the public roots vouch for (a cloud store, whose
// intermediates change at every renewal) is checked against them at each
// run instead, and nothing is recorded. The public roots are Mozilla's
// (publicRoots): the box has no system roots of its own.
func pinCA(host, file string) error {
	if _, err := os.Stat(file); err == nil {
		return nil
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "443")
	}
	d := &net.Dialer{Timeout: 15 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", host, &tls.Config{InsecureSkipVerify: true}) // only to read the chain
	if err != nil {
		return fmt.Errorf("the HTTPS target %s: %w", host, err)
	}
	chain := conn.ConnectionState().PeerCertificates
	conn.Close()
	if len(chain) == 0 {
		return fmt.Errorf("the HTTPS target %s presents no certificate", host)
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	name, _, _ := net.SplitHostPort(host)
	if _, err := chain[0].Verify(x509.VerifyOptions{DNSName: name, Intermediates: inter, Roots: publicRoots()}); err == nil {
		return nil // the public roots vouch for it
	}
	top := chain[len(chain)-1]
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	return writeFile(file, func(w io.Writer) error {
		return pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: top.Raw})
	})
}

// publicRoots is Mozilla's roots as x509roots/fallback's bundle holds
// them (those with a date or use constraint left out), parsed when asked.
func publicRoots() *x509.CertPool {
	p := x509.NewCertPool()
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if c, err := x509.ParseCertificate(r.Certificate); err == nil {
			p.AddCert(c)
		}
	}
	return p
}

// writePublicRoots writes publicRoots' certificates as PEM at file, unless
// it holds them already.
func writePublicRoots(file string) error {
	var b []byte
	for r := range bundle.Roots() {
		if r.Constraint == nil {
			b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})...)
		}
	}
	if have, err := os.ReadFile(file); err == nil && string(have) == string(b) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	return writeFile(file, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// withTarget is ctx with what the engine's HTTP client needs for the
// target: for an HTTPS one with a pinned CA (copies.Settings.TargetCA), that CA
// as its only root.
func withTarget(ctx context.Context, st copies.Settings) (context.Context, error) {
	t, err := copies.ParseTarget(st.Target)
	if err != nil || (t.Kind != "webdav" && t.Kind != "s3") || !strings.HasPrefix(t.URL, "https:") || st.TargetCA == "" {
		return ctx, err
	}
	u, _ := url.Parse(t.URL)
	if err := pinCA(u.Host, st.TargetCA); err != nil {
		return ctx, err
	}
	if _, err := os.Stat(st.TargetCA); errors.Is(err, os.ErrNotExist) {
		// Checked against the public roots, from a file beside the pin:
		// parsed for the run only, not kept in every process.
		roots := filepath.Join(filepath.Dir(st.TargetCA), "public-roots.pem")
		if err := writePublicRoots(roots); err != nil {
			return ctx, err
		}
		ctx, ci := fs.AddConfig(ctx)
		ci.CaCert = []string{roots}
		return ctx, nil
	}
	// The engine exits on a CA file it cannot read: check it first.
	b, err := os.ReadFile(st.TargetCA)
	if err != nil || !x509.NewCertPool().AppendCertsFromPEM(b) {
		return ctx, fmt.Errorf("the target's recorded CA %s cannot be read (remove it to record it again): %v", st.TargetCA, err)
	}
	ctx, ci := fs.AddConfig(ctx)
	ci.CaCert = []string{st.TargetCA}
	return ctx, nil
}

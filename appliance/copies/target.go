package copies

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base32"
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
	"golang.org/x/crypto/ssh/knownhosts"
	"golang.org/x/crypto/x509roots/fallback/bundle"

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

// Target is a parsed Settings.Target.
type Target struct {
	Kind   string // "local", "sftp", "webdav", "s3"
	Path   string // the folder on it (s3: BUCKET/FOLDER)
	User   string // s3: the access key ID
	Host   string // host:port
	URL    string // webdav: the folder's URL; s3: the store's (https://HOST)
	Region string // s3: "" asks the store
}

// ParseTarget reads a target: a folder, sftp://USER@HOST[:PORT]/PATH,
// davs://USER@HOST[:PORT]/PATH (dav:// for plain HTTP), or an
// S3-compatible store's s3://KEYID@HOST[:PORT]/BUCKET/PATH[?region=R]
// (s3+http:// for plain HTTP).
func ParseTarget(s string) (Target, error) {
	if s == "" {
		return Target{}, errors.New("no target")
	}
	if strings.HasPrefix(s, "/") {
		return Target{Kind: "local", Path: filepath.Clean(s)}, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return Target{}, fmt.Errorf("%q is not a folder (/...), sftp://USER@HOST/PATH, davs://USER@HOST/PATH or s3://KEYID@HOST/BUCKET/PATH", Redacted(s))
	}
	if u.User != nil {
		if _, set := u.User.Password(); set {
			return Target{}, errors.New("a password goes in copy_target_password, not in the target")
		}
	}
	t := Target{User: u.User.Username(), Host: u.Host, Path: u.Path}
	switch u.Scheme {
	case "sftp":
		t.Kind = "sftp"
		if t.User == "" {
			return Target{}, fmt.Errorf("%s: the SFTP user is missing (sftp://USER@HOST/PATH)", s)
		}
		if rest, ok := strings.CutPrefix(t.Path, "/~/"); ok { // in the user's home
			t.Path = rest
		}
		if _, _, err := net.SplitHostPort(t.Host); err != nil {
			t.Host = net.JoinHostPort(t.Host, "22")
		}
	case "davs", "dav":
		t.Kind = "webdav"
		scheme := "https"
		if u.Scheme == "dav" {
			scheme = "http"
		}
		// The engine takes the URL's folder as there already: the user's
		// DAV root on a bonesync or Nextcloud box, else the server's root;
		// the folders below it are made as needed.
		root := "/"
		if i := strings.Index(u.Path, "/remote.php/dav/files/"); i >= 0 {
			user, _, _ := strings.Cut(u.Path[i+len("/remote.php/dav/files/"):], "/")
			root = u.Path[:i] + "/remote.php/dav/files/" + user + "/"
		}
		t.URL = (&url.URL{Scheme: scheme, Host: u.Host, Path: root}).String()
		t.Path = strings.Trim(strings.TrimPrefix(u.Path, root), "/")
	case "s3", "s3+http":
		t.Kind, t.Region = "s3", u.Query().Get("region")
		scheme := "https"
		if u.Scheme == "s3+http" {
			scheme = "http"
		}
		t.URL = scheme + "://" + u.Host
		t.Path = strings.Trim(u.Path, "/")
		if t.User == "" || t.Path == "" {
			return Target{}, fmt.Errorf("%s: an S3 target is s3://KEYID@HOST/BUCKET/PATH (the secret key in copy_target_password)", s)
		}
	default:
		return Target{}, fmt.Errorf("%s: a target is a folder, sftp://, davs:// or s3://", Redacted(s))
	}
	return t, nil
}

// Redacted is a target as logs may say it: no password.
func Redacted(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, set := u.User.Password(); set {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return s
}

// configure tells the engine of the target and the copy on it, and
// returns the copy's root ("bonesync-copy:").
func configure(st Settings) (string, error) {
	t, err := ParseTarget(st.Target)
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
			if err := pinHostKey(t.Host, st.KnownHosts); err != nil {
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

// NewPassword is a new encryption password: 26 letters and digits (130
// bits), easy to write down.
func NewPassword() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
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

// pinHostKey records, the first time, the host key the SFTP target at
// host presents, in known_hosts form at file; later runs then refuse any
// other key (a machine that took the target's address).
func pinHostKey(host, file string) error {
	if _, err := os.Stat(file); err == nil {
		return nil
	}
	var key ssh.PublicKey
	cfg := &ssh.ClientConfig{
		User: "bonesync-pin",
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error {
			key = k
			return errPinned
		},
		Timeout: 15 * time.Second,
	}
	c, err := ssh.Dial("tcp", host, cfg)
	if c != nil {
		c.Close()
	}
	if key == nil {
		return fmt.Errorf("the SFTP target %s: %w", host, err)
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(host)}, key)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	return writeFile(file, func(w io.Writer) error { _, err := io.WriteString(w, line+"\n"); return err })
}

var errPinned = errors.New("host key recorded")

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
// target: for an HTTPS one with a pinned CA (Settings.TargetCA), that CA
// as its only root.
func withTarget(ctx context.Context, st Settings) (context.Context, error) {
	t, err := ParseTarget(st.Target)
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

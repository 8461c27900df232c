package copies

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
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

package copies

import (
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]Target{
		"/media/usb/copy":                {Kind: "local", Path: "/media/usb/copy"},
		"sftp://me@nas:2222/backups/box": {Kind: "sftp", User: "me", Host: "nas:2222", Path: "/backups/box"},
		"sftp://me@nas/~/box":            {Kind: "sftp", User: "me", Host: "nas:22", Path: "box"},
		"davs://me@box2/remote.php/dav/files/me/copies/a": {Kind: "webdav", User: "me", Host: "box2",
			URL: "https://box2/remote.php/dav/files/me/", Path: "copies/a"},
		"dav://me@nas:8080/webdav/box": {Kind: "webdav", User: "me", Host: "nas:8080", URL: "http://nas:8080/", Path: "webdav/box"},
		"s3://AKIA1@s3.eu-west-1.amazonaws.com/household/box?region=eu-west-1": {Kind: "s3", User: "AKIA1",
			Host: "s3.eu-west-1.amazonaws.com", URL: "https://s3.eu-west-1.amazonaws.com", Path: "household/box", Region: "eu-west-1"},
		"s3+http://key@nas:9000/copies/": {Kind: "s3", User: "key", Host: "nas:9000", URL: "http://nas:9000", Path: "copies"},
	} {
		if got, err := ParseTarget(in); err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "relative/path", "ftp://x/y", "sftp://nas/box", "sftp://me:hunter2@nas/box",
		"s3://nas/bucket", "s3://key@nas/", "s3://key:hunter2@nas/bucket"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) took it", bad)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

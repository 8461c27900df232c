package web

// The names of the properties that the ownCloud and Nextcloud clients (and
// rclone's owncloud and nextcloud vendors) ask a PROPFIND for, and of RFC
// 4331's quota properties; propfind.go computes them from the store.

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"time"
)

const (
	ocNS = "http://owncloud.org/ns"
	ncNS = "http://nextcloud.org/ns"
)

var (
	lastModifiedProp = xml.Name{Space: "DAV:", Local: "lastmodified"}
	ocFileID         = xml.Name{Space: ocNS, Local: "fileid"}
	ocID             = xml.Name{Space: ocNS, Local: "id"}
	ocPermissions    = xml.Name{Space: ocNS, Local: "permissions"}
	ocSize           = xml.Name{Space: ocNS, Local: "size"}
	ocChecksums      = xml.Name{Space: ocNS, Local: "checksums"}
	ocDownloadURL    = xml.Name{Space: ocNS, Local: "downloadURL"}
	ocDDC            = xml.Name{Space: ocNS, Local: "dDC"}
	ocShareTypes     = xml.Name{Space: ocNS, Local: "share-types"}
)

// instanceID ends every oc:id, as a Nextcloud server's instance id does.
const instanceID = "ocbonesync"

// ocIDOf is the oc:id and OC-FileId of a file: its id, then the instance's.
func ocIDOf(fileID uint64) string { return fmt.Sprintf("%08d%s", fileID, instanceID) }

var (
	quotaUsed      = xml.Name{Space: "DAV:", Local: "quota-used-bytes"}
	quotaAvailable = xml.Name{Space: "DAV:", Local: "quota-available-bytes"}
)

// xmlText escapes text for an XML element's content (quotes need not be).
func xmlText(s string) string { return textEscaper.Replace(s) }

var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#xD;")

// parseModTime reads a lastmodified value: seconds since 1970 (what the
// ownCloud clients and rclone send) or an HTTP date.
func parseModTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if t, err := parseUnixTime(v); err == nil {
		return t, nil
	}
	if t, err := http.ParseTime(v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("lastmodified %q is neither seconds since 1970 nor an HTTP date", v)
}

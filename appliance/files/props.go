package files

// The names of the properties that the ownCloud and Nextcloud clients (and
// rclone's owncloud and nextcloud vendors) ask a PROPFIND for, and of RFC
// 4331's quota properties; propfind.go computes them from the store.

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/davxml"
	"github.com/bonesync/bonesync/appliance/state"
)

func ocName(local string) xml.Name { return xml.Name{Space: davxml.NSOC, Local: local} }

func ncName(local string) xml.Name { return xml.Name{Space: davxml.NSNC, Local: local} }

var (
	lastModifiedProp = davxml.Name("lastmodified")
	quotaUsed        = davxml.Name("quota-used-bytes")
	quotaAvailable   = davxml.Name("quota-available-bytes")
	ocFileID         = ocName("fileid")
	ocID             = ocName("id")
	ocPermissions    = ocName("permissions")
	ocSize           = ocName("size")
	ocChecksums      = ocName("checksums")
	ocDownloadURL    = ocName("downloadURL")
	ocDDC            = ocName("dDC")
	ocShareTypes     = ocName("share-types")
	ncHasPreview     = ncName("has-preview")
	ncMountType      = ncName("mount-type")
	ocOwnerID        = ocName("owner-id")
	ocOwnerName      = ocName("owner-display-name")
)

// instanceID ends every oc:id, as a Nextcloud server's instance id does.
const instanceID = "ocbonesync"

// ocIDOf is the oc:id and OC-FileId of a file: its id, then the instance's.
func ocIDOf(fileID uint64) string { return fmt.Sprintf("%08d%s", fileID, instanceID) }

// liveProps are the properties the store answers; any other name is a dead
// property, stored by PROPPATCH.
var liveProps = map[xml.Name]bool{
	davxml.Name("resourcetype"): true, davxml.Name("displayname"): true, davxml.Name("getcontentlength"): true,
	davxml.Name("getlastmodified"): true, davxml.Name("getcontenttype"): true, davxml.Name("getetag"): true,
	davxml.Name("supportedlock"): true, davxml.Name("lockdiscovery"): true, davxml.Name("creationdate"): true,
	davxml.Name("getcontentlanguage"): true, quotaUsed: true, quotaAvailable: true,
	ocFileID: true, ocID: true, ocPermissions: true, ocSize: true, ocChecksums: true,
	ocDownloadURL: true, ocDDC: true, ocShareTypes: true, ncHasPreview: true, ocFavorite: true,
	ncMountType: true, ocOwnerID: true, ocOwnerName: true,
}

// allLive are the live properties allprop returns (RFC 4918 section 9.1;
// RFC 4331's quota properties are left out, as it says).
var allLive = []xml.Name{
	davxml.Name("resourcetype"), davxml.Name("displayname"), davxml.Name("getcontentlength"), davxml.Name("getlastmodified"),
	davxml.Name("getcontenttype"), davxml.Name("getetag"), davxml.Name("supportedlock"), davxml.Name("lockdiscovery"),
}

// parseModTime reads a lastmodified value: seconds since 1970 (what the
// ownCloud clients and rclone send) or an HTTP date.
func parseModTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if t, err := parseUnixTime(v); err == nil {
		return t, nil
	}
	if t, err := http.ParseTime(v); err == nil {
		return t, state.Storable("lastmodified", t)
	}
	return time.Time{}, fmt.Errorf("lastmodified %q is neither seconds since 1970 nor an HTTP date", v)
}

package web

// The properties that the ownCloud and Nextcloud clients (and rclone's
// owncloud and nextcloud vendors) ask a PROPFIND for, computed from the
// store: they are served as dead properties, which x/net/webdav looks up
// before its live ones, so a folder gets a getetag too.

import (
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/webdav"

	"github.com/bonesync/bonesync/appliance/store"
)

const ocNS = "http://owncloud.org/ns"

var (
	getETagProp      = xml.Name{Space: "DAV:", Local: "getetag"}
	lastModifiedProp = xml.Name{Space: "DAV:", Local: "lastmodified"}
	ocFileID         = xml.Name{Space: ocNS, Local: "fileid"}
	ocID             = xml.Name{Space: ocNS, Local: "id"}
	ocPermissions    = xml.Name{Space: ocNS, Local: "permissions"}
	ocSize           = xml.Name{Space: ocNS, Local: "size"}
	ocChecksums      = xml.Name{Space: ocNS, Local: "checksums"}
)

// computed are the properties the store computes; a PROPPATCH cannot set them.
var computed = map[xml.Name]bool{
	getETagProp: true, ocFileID: true, ocID: true, ocPermissions: true, ocSize: true, ocChecksums: true,
	{Space: "DAV:", Local: "lockdiscovery"}: true, {Space: "DAV:", Local: "supportedlock"}: true,
	quotaUsed: true, quotaAvailable: true,
}

// instanceID ends every oc:id, as a Nextcloud server's instance id does.
const instanceID = "ocbonesync"

// ocIDOf is the oc:id and OC-FileId of a file: its id, then the instance's.
func ocIDOf(fileID uint64) string { return fmt.Sprintf("%08d%s", fileID, instanceID) }

// computedProps adds the computed properties of in to m.
func computedProps(m map[xml.Name]webdav.Property, in store.Info) {
	set := func(name xml.Name, inner string) {
		m[name] = webdav.Property{XMLName: name, InnerXML: []byte(inner)}
	}
	set(ocFileID, fmt.Sprint(in.FileID))
	set(ocID, ocIDOf(in.FileID))
	if in.IsDir() {
		set(getETagProp, xmlText(quote(in.ETag)))
		// Read, delete, rename, move, add files and folders; no sharing.
		set(ocPermissions, "RGDNVCK")
		return
	}
	set(ocPermissions, "RGDNVW")
	set(ocSize, fmt.Sprint(in.Size()))
	if in.Sums != nil {
		sums := "SHA1:" + hex.EncodeToString(in.Sums.SHA1[:])
		if in.Sums.HasMD5 {
			sums += " MD5:" + hex.EncodeToString(in.Sums.MD5[:])
		}
		set(ocChecksums, "<checksum xmlns=\""+ocNS+"\">"+sums+"</checksum>")
	}
}

var (
	quotaUsed      = xml.Name{Space: "DAV:", Local: "quota-used-bytes"}
	quotaAvailable = xml.Name{Space: "DAV:", Local: "quota-available-bytes"}
)

// quotaProps adds RFC 4331's properties: the bytes the user's files take,
// and what is left, the smaller of the quota's rest and the disk's free
// space.
func quotaProps(m map[xml.Name]webdav.Property, t *store.Tree) {
	used, err := t.Usage()
	if err != nil {
		return
	}
	avail, err := t.Free()
	if err != nil {
		return
	}
	if q := t.Quota(); q > 0 {
		avail = max(0, min(avail, q-used))
	}
	m[quotaUsed] = webdav.Property{XMLName: quotaUsed, InnerXML: []byte(fmt.Sprint(used))}
	m[quotaAvailable] = webdav.Property{XMLName: quotaAvailable, InnerXML: []byte(fmt.Sprint(avail))}
}

func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

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

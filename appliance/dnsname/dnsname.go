// Package dnsname checks host names: the box's name is one DNS label, used in
// the config, the certificate authority's constraints, DHCP and mDNS alike.
package dnsname

// ValidLabel reports whether s is one DNS host label (RFC 1123): 1 to 63
// letters, digits and hyphens, not starting or ending with a hyphen.
func ValidLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
		default:
			return false
		}
	}
	return true
}

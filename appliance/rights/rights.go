// Package rights is what a share lets its recipient do, numbered as
// Nextcloud numbers a share's permissions (OCS and the DAV
// oc:permissions): the store enforces them, shares keeps them, and the
// protocols and pages show and ask for them. A leaf, so that none of
// those needs another for the numbers.
package rights

// Set is what may be done: the sum of the rights below.
type Set int

// The rights, which add up.
const (
	Read   Set = 1
	Update Set = 2
	Create Set = 4
	Delete Set = 8
	Share  Set = 16
	All        = Read | Update | Create | Delete | Share
)

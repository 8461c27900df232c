package accounts

import (
	"fmt"

	"github.com/bonesync/bonesync/appliance/store"
)

// Room is an account's one quota, which its files and its calendars and
// contacts share, and the disk's last MiB, which no calendar object
// takes: the file protocols ask Quota, the calendars ForCalendars.
type Room struct {
	// Limits are the accounts' quotas (users.DB; 0: none).
	Limits interface{ Quota(user string) int64 }
	// Files are the accounts' files (the store).
	Files interface {
		UsageOf(user string) (store.Usage, error)
		DiskSpace() (total, free int64, err error)
	}
	// Calendars say what an account's calendars and contacts take
	// (calendars.Store.Used); nil: none are kept.
	Calendars interface {
		Used(user string) (int64, error)
	}
}

// Quota is what user's files may take: the account's quota less what its
// calendars and contacts take, never 0, which would mean no limit (0:
// none).
func (r Room) Quota(user string) int64 {
	limit := r.Limits.Quota(user)
	if limit <= 0 || r.Calendars == nil {
		return limit
	}
	used, err := r.Calendars.Used(user)
	if err != nil {
		return limit
	}
	return max(limit-used, 1)
}

// ForCalendars says why user's calendars and contacts, which take used
// bytes, may not grow by grow more ("": they may): the quota their files
// share, or the disk's last MiB.
func (r Room) ForCalendars(user string, used, grow int64) (why string, err error) {
	if q := r.Limits.Quota(user); q > 0 {
		u, err := r.Files.UsageOf(user) // its own tree, no shares mounted
		if err != nil {
			return "", err
		}
		if u.Files+used+grow > q {
			return fmt.Sprintf("over your quota of %d MiB (files %d MiB, calendars and contacts %d MiB)", q>>20, u.Files>>20, used>>20), nil
		}
	}
	_, free, err := r.Files.DiskSpace()
	if err != nil {
		return "", err
	}
	if free < grow+1<<20 {
		return "the disk is full", nil
	}
	return "", nil
}

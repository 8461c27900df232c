package server

import (
	"fmt"
	"path"
	"strconv"

	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/notices"
	"github.com/bonesync/bonesync/appliance/rights"
	"github.com/bonesync/bonesync/appliance/shares"
)

// noticeFacts are what the notices' rules (notices.Watch) look at: the
// accounts' files, the disk and the card.
type noticeFacts struct{ s *services }

func (f noticeFacts) Uses() ([]notices.Use, error) {
	accounts, err := f.s.accounts.List()
	if err != nil {
		return nil, err
	}
	var uses []notices.Use
	for _, a := range accounts {
		u := notices.Use{User: a.Name, Quota: a.Quota}
		if a.Quota > 0 {
			tree, err := f.s.files.Tree(a.Name)
			if err != nil {
				continue
			}
			u.Used, err = tree.Usage()
			tree.Close()
			if err != nil {
				continue
			}
		}
		uses = append(uses, u)
	}
	return uses, nil
}

func (f noticeFacts) DiskSpace() (total, free int64, err error) { return f.s.files.DiskSpace() }

func (f noticeFacts) FailedTrial() (tried, running string, err error) {
	if f.s.card == nil {
		return "", "", nil
	}
	st, err := f.s.card.Status()
	if err != nil || st.FailedTrial == "" {
		return "", "", err
	}
	return st.Other, st.Slot, nil
}

func (f noticeFacts) Copy() (string, copies.Status, bool) {
	if f.s.copyPlan == nil {
		return "", copies.Status{}, false
	}
	st, ok := copies.ReadStatus(copies.Dir(f.s.o.State))
	return f.s.copyPlan.Config().CopyTarget, st, ok
}

// noticeWatch is the notices of what lasts, on this server's facts.
func (s *services) noticeWatch() *notices.Watch {
	return &notices.Watch{Board: s.notices, Facts: noticeFacts{s}, Health: s.health,
		Dirs: []string{s.o.State, s.o.Files}, Now: s.prov.Clock.Now, Log: s.log}
}

func (s *services) post(user, kind, key, subject, message, link string) {
	if err := s.notices.Post(user, kind, key, subject, message, link); err != nil {
		s.log.Warn("cannot post a notice", "user", user, "kind", kind, "err", err)
	}
}

// toldShare tells a user of a share given to them.
func (s *services) toldShare(sh shares.Share) {
	what := map[string]string{shares.ItemFolder: "the folder", shares.ItemFile: "the file",
		shares.ItemCalendar: "the calendar", shares.ItemAddressBook: "the address book"}[sh.Item]
	name := sh.Mount
	if name == "" {
		name = path.Base(sh.Path)
	}
	may := "to read"
	if rights.Set(sh.Perm)&rights.Update != 0 {
		may = "to read and change"
	}
	link := "/files/"
	if sh.Item == shares.ItemCalendar || sh.Item == shares.ItemAddressBook {
		link = ""
	}
	s.post(sh.With, "share", strconv.Itoa(sh.ID), fmt.Sprintf("%s shared %s %s with you", sh.Owner, what, name),
		"You may use it "+may+".", link)
}

package calendars

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bonesync/bonesync/appliance/front"
)

type fakeSharing struct {
	grants map[string][]Grant
	left   []string
}

func (f *fakeSharing) Granted(user string, k Kind) []Grant {
	if k != Calendars {
		return nil
	}
	return f.grants[user]
}

func (f *fakeSharing) Leave(user, id string) error {
	f.left = append(f.left, id)
	f.grants[user] = nil
	return nil
}

func TestSharedCalendar(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sharing := &fakeSharing{grants: map[string][]Grant{}}
	s.Sharing = sharing
	h := &Handler{Store: s, Log: slog.New(slog.DiscardHandler)}
	mux := front.NewRoutes(testDoor{})
	h.Routes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	bob, ann := client{t, srv, "bob"}, client{t, srv, "ann"}
	// Bob's calendar, with an event.
	if code, body, _ := bob.do("PUT", "/remote.php/dav/calendars/bob/personal/party.ics", fmt.Sprintf(event, "party-1", "Party"), "Content-Type", "text/calendar"); code != 201 {
		t.Fatalf("PUT = %d %s", code, body)
	}
	sharing.grants["ann"] = []Grant{{ID: "7", Owner: "bob", Name: "personal"}}
	shared := "/remote.php/dav/calendars/ann/personal_shared_by_bob/"
	ask := `<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><d:displayname/><d:current-user-privilege-set/><cs:getctag/><d:owner/></d:prop></d:propfind>`
	_, body, _ := ann.do("PROPFIND", "/remote.php/dav/calendars/ann/", ask, "Depth", "1")
	if !strings.Contains(body, "<d:href>"+shared+"</d:href>") || !strings.Contains(body, "(bob)</d:displayname>") ||
		!strings.Contains(body, "<d:current-user-privilege-set><d:privilege><d:read/></d:privilege></d:current-user-privilege-set>") ||
		!strings.Contains(body, "/principals/users/bob/") {
		t.Errorf("ann's home:\n%s", body)
	}
	if code, body, _ := ann.do("GET", shared+"party.ics", ""); code != 200 || !strings.Contains(body, "SUMMARY:Party") {
		t.Errorf("ann's GET = %d %s", code, body)
	}
	// Read-only: nothing written, by either method.
	if code, _, _ := ann.do("PUT", shared+"mine.ics", fmt.Sprintf(event, "mine-1", "Mine"), "Content-Type", "text/calendar"); code != 403 {
		t.Errorf("PUT in a read-only share = %d", code)
	}
	if code, _, _ := ann.do("DELETE", shared+"party.ics", ""); code != 403 {
		t.Errorf("DELETE in a read-only share = %d", code)
	}
	// Read and write: ann's event is bob's.
	sharing.grants["ann"][0].Write = true
	if code, body, _ := ann.do("PUT", shared+"mine.ics", fmt.Sprintf(event, "mine-1", "Mine"), "Content-Type", "text/calendar"); code != 201 {
		t.Errorf("PUT in a read-write share = %d %s", code, body)
	}
	if code, body, _ := bob.do("GET", "/remote.php/dav/calendars/bob/personal/mine.ics", ""); code != 200 || !strings.Contains(body, "SUMMARY:Mine") {
		t.Errorf("bob's calendar lacks ann's event: %d", code)
	}
	// A REPORT through the share (the clients' sync).
	code, body, _ := ann.do("REPORT", shared, `<d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`)
	if code != 207 || !strings.Contains(body, shared+"mine.ics") || !strings.Contains(body, shared+"party.ics") {
		t.Errorf("sync-collection through the share = %d %s", code, body)
	}
	// Others see nothing of it; ann leaves it by deleting it.
	if code, _, _ := (client{t, srv, "carol"}).do("GET", shared+"party.ics", ""); code != 404 {
		t.Errorf("carol reached ann's share: %d", code)
	}
	if code, _, _ := ann.do("DELETE", shared, ""); code != 204 || len(sharing.left) != 1 {
		t.Errorf("leaving = %d %v", code, sharing.left)
	}
}

package notices

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
)

type door string

func (d door) Check(auth.Access, http.ResponseWriter, *http.Request) (auth.Caller, error) {
	return auth.Caller{User: string(d)}, nil
}

func TestPostDismissClear(t *testing.T) {
	dir := t.TempDir()
	b := Open(dir, slog.New(slog.DiscardHandler))
	b.Post("alice", "quota", "", "Your files take 92% of your quota", "", "/account")
	b.Post("alice", "quota", "", "Your files take 93% of your quota", "", "/account") // the same thing: once
	b.Post("alice", "update", "2.0", "The update to 2.0 was rolled back", "", "")
	all, _ := Open(dir, slog.New(slog.DiscardHandler)).List("alice") // read back from the file
	if len(all) != 2 || all[0].Kind != "update" || all[1].Subject != "Your files take 92% of your quota" {
		t.Fatalf("List = %+v", all)
	}
	// Dismissed while it lasts: not told again; over, it may be.
	if ok, err := b.Dismiss("alice", all[1].ID); !ok || err != nil {
		t.Fatalf("Dismiss = %v, %v", ok, err)
	}
	b.Post("alice", "quota", "", "Your files take 95% of your quota", "", "")
	if all, _ := b.List("alice"); len(all) != 1 {
		t.Errorf("a dismissed notice came back: %+v", all)
	}
	b.Clear("alice", "quota", "")
	b.Post("alice", "quota", "", "Your files take 91% of your quota", "", "")
	if all, _ := b.List("alice"); len(all) != 2 {
		t.Errorf("after Clear, the quota could not be told again: %+v", all)
	}
	if ok, _ := b.Dismiss("alice", 999); ok {
		t.Error("dismissed a notice there is none of")
	}
	if ok, _ := b.Dismiss("alice", 0); !ok {
		t.Error("Dismiss(0) did not dismiss all")
	}
	if all, _ := b.List("alice"); len(all) != 0 {
		t.Errorf("after dismissing all: %+v", all)
	}
}

func TestNotificationsAPI(t *testing.T) {
	b := Open(t.TempDir(), slog.New(slog.DiscardHandler))
	b.now = func() time.Time { return time.Date(2026, 8, 11, 10, 0, 0, 0, time.UTC) }
	b.Post("alice", "disk", "", "The box's disk is nearly full", "2 GB of 32 GB free", "/admin/")
	h := &Handler{Board: b, Log: slog.New(slog.DiscardHandler)}
	mux := front.NewRoutes(door("alice"))
	h.Routes(mux)
	do := func(method, target string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, nil)
		r.Host = "box.local"
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w
	}
	w := do("GET", api+"?format=json")
	var got struct {
		OCS struct {
			Meta struct{ Statuscode int }
			Data []map[string]any
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 || got.OCS.Meta.Statuscode != 200 || len(got.OCS.Data) != 1 {
		t.Fatalf("list = %d %s", w.Code, w.Body.String())
	}
	n := got.OCS.Data[0]
	if n["notification_id"] != float64(1) || n["datetime"] != "2026-08-11T10:00:00+00:00" || n["link"] != "https://box.local/admin/" || n["subject"] != "The box's disk is nearly full" {
		t.Errorf("notification = %v", n)
	}
	if w := do("GET", api+"/1?format=json"); w.Code != 200 {
		t.Errorf("GET one = %d", w.Code)
	}
	if w := do("DELETE", api+"/1?format=json"); w.Code != 200 {
		t.Errorf("DELETE = %d %s", w.Code, w.Body.String())
	}
	if w := do("DELETE", api+"/1?format=json"); w.Code != 404 {
		t.Errorf("DELETE again = %d, want 404", w.Code)
	}
	if w := do("DELETE", api+"?format=json"); w.Code != 200 {
		t.Errorf("DELETE all = %d", w.Code)
	}
}

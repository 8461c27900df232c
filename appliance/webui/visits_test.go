package webui

import "testing"

// A visit holds for the password it was given under, and a flood of
// visits to links without one does not log out those who gave one.
func TestLinkVisits(t *testing.T) {
	var v linkVisits
	open := v.open("tok", "")
	if !v.valid("tok", open, "") {
		t.Fatal("a fresh visit is not valid")
	}
	if v.valid("tok", open, "argon2id-hash") {
		t.Error("a visit from before the link had a password passes it")
	}
	given := v.open("tok", "hash-1")
	if v.valid("tok", given, "hash-2") {
		t.Error("a visit holds after the password changed")
	}
	for range maxVisits + 10 {
		v.open("other", "")
	}
	if !v.valid("tok", given, "hash-1") {
		t.Error("a flood of visits to an open link dropped a visit that gave the password")
	}
	if len(v.m) > maxVisits {
		t.Errorf("%d visits remembered, bound %d", len(v.m), maxVisits)
	}
}

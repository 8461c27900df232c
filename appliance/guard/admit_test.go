package guard

import (
	"bytes"
	"github.com/bonesync/bonesync/appliance/sysd"
	"strings"
	"testing"
)

func TestAdmission(t *testing.T) {
	var log bytes.Buffer
	a := NewAdmission("https", Limits{PerAddress: 3, Waiting: 2}, sysd.NewLogger(&log))
	t1, t2 := a.Admit("10.0.0.2"), a.Admit("10.0.0.2")
	if t1 == nil || t2 == nil {
		t.Fatal("refused below the limits")
	}
	if a.Admit("10.0.0.2") != nil {
		t.Fatal("a third waiting connection was admitted")
	}
	if a.Admit("10.0.0.2") != nil || strings.Count(log.String(), "refusing") != 1 {
		t.Fatalf("want one log line for two refusals:\n%s", log.String())
	}
	if a.Admit("10.0.0.3") == nil {
		t.Fatal("another address was refused")
	}
	t1.Ready()
	t1.Ready() // twice counts once
	t3 := a.Admit("10.0.0.2")
	if t3 == nil {
		t.Fatal("not admitted after one connection finished its handshake")
	}
	t3.Ready()
	if a.Admit("10.0.0.2") != nil {
		t.Fatal("a fourth open connection was admitted")
	}
	t1.Done()
	t1.Done()
	if t4 := a.Admit("10.0.0.2"); t4 == nil {
		t.Fatal("not admitted after a connection closed")
	}
	var none *Admission
	none.Admit("x").Done() // nil: no caps
}

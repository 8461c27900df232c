package boot

import (
	"context"
	"strings"
	"testing"

	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/board"
)

func TestConsoleCommands(t *testing.T) {
	log := &safeBuf{}
	s := &System{Console: log, Log: sysd.NewConsoleLogger(log, "bonesync: "), Board: &board.Board{Name: "test", Model: "Test Board"}}
	s.LEDs = newLEDs(nil, s.Log)
	s.LEDs.Set(LEDServing)
	s.Hostname = "nas" // the name won on the network
	s.command(context.Background(), []string{"help"}, nil)
	s.command(context.Background(), []string{"status"}, nil)
	s.command(context.Background(), []string{"frobnicate"}, nil)
	out := log.String()
	for _, want := range []string{"reboot, poweroff", "board:   Test Board", "name:    nas.local", "LEDs:    serving", `unknown command "frobnicate"`} {
		if !strings.Contains(out, want) {
			t.Errorf("console output lacks %q:\n%s", want, out)
		}
	}
}

// A failed first step (mounts) offers the prompt before the board is known:
// status must not crash PID 1 (a reboot loop with panic=10).
func TestConsoleBeforeTheBoardIsKnown(t *testing.T) {
	log := &safeBuf{}
	s := &System{Console: log, Log: sysd.NewConsoleLogger(log, "bonesync: ")}
	s.command(context.Background(), []string{"status"}, nil)
	if !strings.Contains(log.String(), "board:   not identified") {
		t.Errorf("status without a board:\n%s", log)
	}
}

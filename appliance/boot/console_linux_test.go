package boot

import (
	"context"
	"strings"
	"testing"

	"github.com/bonesync/bonesync/board"
)

func TestConsoleCommands(t *testing.T) {
	log := &safeBuf{}
	s := &System{Log: log, Board: &board.Board{Name: "test", Model: "Test Board"}}
	s.LEDs = newLEDs(nil, log)
	s.LEDs.Set(LEDServing)
	s.Config.Hostname = "nas"
	s.command(context.Background(), []string{"help"})
	s.command(context.Background(), []string{"status"})
	s.command(context.Background(), []string{"frobnicate"})
	out := log.String()
	for _, want := range []string{"reboot, poweroff", "board:   Test Board", "name:    nas.local", "LEDs:    serving", `unknown command "frobnicate"`} {
		if !strings.Contains(out, want) {
			t.Errorf("console output lacks %q:\n%s", want, out)
		}
	}
}

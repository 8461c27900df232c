package boot

import (
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// LED states, each a board LED named in board.json.
const (
	LEDBooting      = "booting"
	LEDBenchmarking = "benchmarking"
	LEDServing      = "serving"
	LEDError        = "error"
)

// LEDs shows the box's state on the board's user LEDs: exactly one state's
// LED is lit. A board without LEDs (QEMU) makes this a no-op.
type LEDs struct {
	names map[string]string
	log   *slog.Logger
	mu    sync.Mutex
	state string
}

func newLEDs(names map[string]string, log *slog.Logger) *LEDs {
	l := &LEDs{names: names, log: log}
	for _, n := range names {
		// Take the LEDs from their default kernel triggers (heartbeat,
		// mmc activity) so that they mean what bonesync says.
		os.WriteFile(filepath.Join("/sys/class/leds", n, "trigger"), []byte("none"), 0o644) // dropped: a board without that LED has none to take
	}
	return l
}

// Set lights the LED of state and puts out the others.
func (l *LEDs) Set(state string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == l.state {
		return
	}
	l.state = state
	for st, n := range l.names {
		v := "0"
		if st == state {
			v = "1"
		}
		if err := os.WriteFile(filepath.Join("/sys/class/leds", n, "brightness"), []byte(v), 0o644); err != nil && st == state {
			l.log.Warn("LED not set", "led", n, "err", err)
		}
	}
}

// State is the state shown.
func (l *LEDs) State() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}

// Sysfs reads the LEDs back from the kernel, " (sysfs: usr0=1 usr1=0 ...)",
// or "" on a board without LEDs.
func (l *LEDs) Sysfs() string {
	if l == nil || len(l.names) == 0 {
		return ""
	}
	var parts []string
	for _, n := range l.names {
		b, err := os.ReadFile(filepath.Join("/sys/class/leds", n, "brightness"))
		v := strings.TrimSpace(string(b))
		if err != nil {
			v = "?"
		}
		parts = append(parts, n+"="+v)
	}
	sort.Strings(parts)
	return " (sysfs: " + strings.Join(parts, " ") + ")"
}

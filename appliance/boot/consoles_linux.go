package boot

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/firstlogin"
	"github.com/bonesync/bonesync/appliance/report"
	"github.com/bonesync/bonesync/appliance/state"
)

// consoles are where PID 1's console goes: the header's UART (the
// kernel's console: PID 1's standard input and output) and, once the USB
// device port offers one, its serial port (ttyGS0, a computer's
// ttyACM0 or COM port). What one shows, the others show: the boot's lines,
// the server's, each command and its answer. Each has its own admin
// prompt. A USB console shows nothing until its first Enter, which greets
// it: a computer's terminal that echoes what it gets before its program
// sets it up would otherwise send the box's own lines back as commands.
type consoles struct {
	uart io.Writer
	mu   sync.Mutex
	usb  []*usbConsole
}

// usbConsole is a console a computer may or may not be reading: what is
// written to it waits in a queue of its own, dropped when the queue is
// full, so that no one's absence holds the UART or the server back.
type usbConsole struct {
	queue  chan []byte
	active atomic.Bool // Enter was pressed there since it was opened
	mu     sync.Mutex
	f      *os.File // the tty open now; nil between a hang-up and its opening again
}

// usbQueue is how many writes wait for a USB console's reader (a line of
// the log is one).
const usbQueue = 512

func (c *consoles) Write(p []byte) (int, error) {
	c.mu.Lock()
	for _, u := range c.usb {
		if !u.active.Load() {
			continue
		}
		select {
		case u.queue <- append([]byte(nil), p...):
		default: // dropped: no one reads that console now
		}
	}
	c.mu.Unlock()
	return c.uart.Write(p)
}

// addConsole makes tty a console, with its own admin prompt, until ctx
// ends. A computer that goes (unplugged) hangs the tty up: it is opened
// again, and the next one to press Enter is greeted again.
func (s *System) addConsole(ctx context.Context, tty string) error {
	f, err := os.OpenFile(tty, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("console %s: %w", tty, err)
	}
	u := &usbConsole{f: f, queue: make(chan []byte, usbQueue)}
	s.consoles.mu.Lock()
	s.consoles.usb = append(s.consoles.usb, u)
	s.consoles.mu.Unlock()
	go func() {
		for {
			select {
			case b := <-u.queue:
				u.mu.Lock()
				f := u.f
				u.mu.Unlock()
				if f != nil {
					// A tty no one reads fills up: its writes wait a
					// second at most, then the line is dropped.
					f.SetWriteDeadline(time.Now().Add(time.Second)) // dropped: a tty the poller does not take blocks instead, as the UART would
					f.Write(b)                                      // dropped: a computer that went; the queue goes on
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		for ctx.Err() == nil {
			// A computer plugged in after the boot missed it: the first
			// Enter says what the boot said that it needs.
			setEcho(f, false)
			s.prompt(ctx, f, func() {
				setEcho(f, true) // a person typed: what they type shows, as on the UART
				s.greet(f)
				u.active.Store(true)
			})
			u.active.Store(false)
			u.mu.Lock()
			u.f = nil
			f.Close()
			u.mu.Unlock()
			for f = nil; f == nil && ctx.Err() == nil; {
				time.Sleep(time.Second)
				f, _ = os.OpenFile(tty, os.O_RDWR|unix.O_NOCTTY, 0)
			}
			u.mu.Lock()
			u.f = f
			u.mu.Unlock()
		}
	}()
	return nil
}

// setEcho turns the tty's echo of what it receives on or off. Off until
// the first Enter: a computer's side that echoes too would send each byte
// back and forth.
func setEcho(f *os.File, on bool) {
	// Through SyscallConn, not Fd, which would take the tty off the
	// poller (and its writes' deadlines with it).
	c, err := f.SyscallConn()
	if err != nil {
		return
	}
	c.Control(func(fd uintptr) { // dropped: a closed tty is opened again by the caller
		t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		if err != nil {
			return // not a terminal: nothing echoes
		}
		if on {
			t.Lflag |= unix.ECHO
		} else {
			t.Lflag &^= unix.ECHO
		}
		unix.IoctlSetTermios(int(fd), unix.TCSETS, t) // dropped: at worst the tty echoes as it did
	})
}

// greet writes to one console what a newcomer needs of the boot's
// output: the keys, the CA's fingerprint and the addresses, and the first
// login's password while it is the one the box made.
func (s *System) greet(w io.Writer) {
	rep, err := (&state.Dir{Path: StateDir}).Read(state.Report)
	if err == nil {
		if r, err := report.Parse(rep); err == nil {
			io.WriteString(w, report.Summary(r)) // dropped: a console that went
		}
	} else {
		io.WriteString(w, "bonesync: no report yet: the box is measuring itself (about two minutes at the first start)\n") // dropped: as above
	}
	// The server writes the note through the card's device, beneath the
	// FAT's cache: it is read the same way.
	var note []byte
	if s.card != nil {
		note, _ = s.card.Read(firstlogin.NoteFile) // dropped: no note read is no note shown
	}
	if note := firstlogin.Note(note); note != "" {
		io.WriteString(w, "\n"+note) // dropped: as above
	}
}

// prompt is one console's admin prompt: quiet until Enter is pressed, so
// the boot log and the report stay readable. greet, if not nil, runs at
// the first Enter. It returns when the console's input ends.
func (s *System) prompt(ctx context.Context, in *os.File, greet func()) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if greet != nil {
			greet()
			greet = nil
		}
		if line := strings.TrimSpace(sc.Text()); line != "" {
			s.cmdMu.Lock()
			s.command(ctx, strings.Fields(line), in)
			s.cmdMu.Unlock()
		}
		fmt.Fprint(s.Console, "bonesync> ")
	}
}

package boot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/sysd"
)

// A USB console no one reads never holds the UART back: its lines are
// dropped once its queue is full.
func TestConsolesDropForAnAbsentReader(t *testing.T) {
	uart := &safeBuf{}
	c := &consoles{uart: uart}
	u := &usbConsole{queue: make(chan []byte, 2)}
	u.active.Store(true)
	c.usb = append(c.usb, u)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 10; i++ {
			fmt.Fprintf(c, "line %d\n", i)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("writing to the consoles blocked on a USB console no one reads")
	}
	if !strings.Contains(uart.String(), "line 9\n") || len(u.queue) != 2 {
		t.Errorf("UART got %q; the USB console's queue holds %d", uart.String(), len(u.queue))
	}
}

// A USB console (here a pseudo-terminal standing for ttyGS0) gets what
// every console gets, and its first Enter greets it and gives the prompt.
func TestUSBConsole(t *testing.T) {
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	uart := &safeBuf{}
	cons := &consoles{uart: uart}
	s := &System{Console: cons, consoles: cons, Log: sysd.NewConsoleLogger(cons, "bonesync: ")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.addConsole(ctx, fmt.Sprintf("/dev/pts/%d", n)); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	read := func(want string) {
		t.Helper()
		buf := make([]byte, 4096)
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(got.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("the USB console never showed %q; it showed %q", want, got.String())
			}
			ptmx.SetReadDeadline(time.Now().Add(time.Second))
			k, _ := ptmx.Read(buf)
			got.Write(buf[:k])
		}
	}
	// Nothing before the first Enter: a terminal echoing it would send
	// it back as commands.
	s.Log.Info("a line of the boot")
	ptmx.Write([]byte("status\n"))
	read("no report yet")
	read("name:    .local")
	read("bonesync> ")
	if strings.Contains(got.String(), "a line of the boot") {
		t.Errorf("the USB console showed a line from before its first Enter: %q", got.String())
	}
	s.Log.Info("a line after it")
	read("bonesync: a line after it")
	if !strings.Contains(uart.String(), "name:    .local") || strings.Contains(uart.String(), "no report yet") {
		t.Errorf("the UART shows the command's answer, not the USB console's greeting; it showed %q", uart.String())
	}
}

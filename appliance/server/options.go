package server

import (
	"context"
	"io"
	"os/exec"
	"time"

	"github.com/bonesync/bonesync/appliance/listen"
)

// Options are the server's command line.
type Options struct {
	State, Config, Files string
	// FilesGone, when set, is why the files cannot be served (the data
	// disk is unplugged): the server serves none, answering 503 with it
	// (gone.go), and leaves the files folder alone.
	FilesGone string
	// Addrs are where the ports listen, by port name (listen.Ports);
	// systemd's sockets, when it passes them, win.
	Addrs map[string]string
	// Listeners, when set, are the ports already open, served as they
	// are and closed when Run returns; Addrs and systemd's sockets are
	// not looked at. For a program that runs the server in its own
	// process on sockets it made (bench/armcost counts the connections
	// open on them).
	Listeners *listen.Listeners
	// Quick benchmarks on the small budget.
	Quick bool
	// Hostname replaces the config's (PID 1 passes the name it won).
	Hostname string
	// Refresh is how often a new address, decision or keys is looked for.
	Refresh time.Duration
	// Boot is the card's boot partition (updates), "" off a card.
	Boot string
	// Board is the board PID 1 runs on, "" on a PC or a Debian install.
	Board string
	// Version is the release, as /status.json and the pages report it
	// and update bundles name it ("0.1.0+20261201").
	Version string
	// Program is the binary as its commands are printed for the person
	// reading ("out/bonesync" under make run; "" is "bonesync").
	Program string
	// LoadGenerator starts the benchmark's client process.
	LoadGenerator  func(ctx context.Context) *exec.Cmd
	Stdout, Stderr io.Writer
}

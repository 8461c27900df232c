package sysd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Message is one sd_notify datagram as a service manager reads it.
type Message struct {
	Pid      int // the sender, from the kernel's credentials
	Ready    bool
	Stopping bool
	Watchdog bool
	Status   string
	Phase    string
	Reboot   string // why the service asks the box to reboot (RequestReboot)
	EMMC     string // "flash": copy the system to the eMMC (RequestEMMCFlash)
	// Listening are the service's addresses by port name, sent with
	// READY=1 (Ready).
	Listening map[string]string
}

// ParseMessage reads the newline-separated assignments of a datagram;
// unknown ones are ignored, as systemd ignores them.
func ParseMessage(b []byte) Message {
	var m Message
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch k {
		case "READY":
			m.Ready = v == "1"
		case "STOPPING":
			m.Stopping = v == "1"
		case "WATCHDOG":
			m.Watchdog = v == "1"
		case "STATUS":
			m.Status = v
		case "X_BONESYNC_PHASE":
			m.Phase = v
		case "X_BONESYNC_REBOOT":
			m.Reboot = v
		case "X_BONESYNC_EMMC":
			m.EMMC = v
		case "X_BONESYNC_LISTEN":
			m.Listening = map[string]string{}
			for _, f := range strings.Fields(v) {
				if name, addr, ok := strings.Cut(f, "="); ok {
					m.Listening[name] = addr
				}
			}
		}
	}
	return m
}

// Manager is the service manager's end of the protocol, for bonesync's own
// PID 1: a datagram socket whose path the service gets as NOTIFY_SOCKET.
type Manager struct {
	conn *net.UnixConn
	path string
}

// Manage listens at path (a stale socket there is replaced).
func Manage(path string) (*Manager, error) {
	os.Remove(path)
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("notify socket %s: %w", path, err)
	}
	// The kernel attaches each sender's pid, so that a late message from
	// a server already replaced is told apart.
	raw, err := conn.SyscallConn()
	if err == nil {
		raw.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PASSCRED, 1) })
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("notify socket %s: credentials: %w", path, err)
	}
	return &Manager{conn: conn, path: path}, nil
}

// Env is the environment a service needs to notify this manager, with the
// watchdog interval it must ping at least once in (0: none).
func (m *Manager) Env(watchdog time.Duration) []string {
	env := []string{"NOTIFY_SOCKET=" + m.path}
	if watchdog > 0 {
		env = append(env, "WATCHDOG_USEC="+strconv.FormatInt(watchdog.Microseconds(), 10))
	}
	return env
}

// Read waits for the next message.
func (m *Manager) Read() (Message, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred))
	n, oobn, _, _, err := m.conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return Message{}, err
	}
	msg := ParseMessage(buf[:n])
	if cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, c := range cmsgs {
			if cred, err := unix.ParseUnixCredentials(&c); err == nil {
				msg.Pid = int(cred.Pid)
			}
		}
	}
	return msg, nil
}

// Close stops listening.
func (m *Manager) Close() error {
	err := m.conn.Close()
	os.Remove(m.path)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

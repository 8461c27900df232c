// Package config reads bonesync's one config file: plain "name = value" lines,
// '#' starts a comment. On the board the file lives on the FAT boot partition
// so it can be edited from any computer before the first boot.
//
// Reading never fails: an unknown name or a bad value is reported as a Problem
// with file:line and the default is kept. A typo never bricks the box.
package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/keys"
)

// Auto is the value of a key setting that lets the benchmark decide.
const Auto = "auto"

// Config is the parsed file, with defaults for everything it does not set.
type Config struct {
	// Hostname is the box's name; the CA is constrained to it, to
	// Hostname.local and to localhost.
	Hostname string
	// TLSKey and SSHHostKey pin a key type, or are Auto.
	TLSKey     keys.Name
	SSHHostKey keys.Name
	// Target is the handshake latency (p95 at Concurrency simultaneous
	// clients) the chosen key must meet.
	Target      time.Duration
	Concurrency int
	// PostQuantum is "auto" (offer hybrid ML-KEM key exchange if it meets the
	// target), "on" or "off".
	PostQuantum string
	// BenchBudget bounds the whole first-boot benchmark.
	BenchBudget time.Duration
	// Address, Gateway and DNS are the static network settings used on the
	// board when DHCP gets no lease (Address empty: link-local instead).
	Address, Gateway string
	DNS              []string
	// NTP are the time servers tried at boot (none: keep the clock floor).
	NTP []string
	// SSHKeyExchanges, SSHCiphers and SSHMACs replace the SFTP server's
	// default algorithm lists when set (nil: the defaults).
	SSHKeyExchanges, SSHCiphers, SSHMACs []string
	// SSHIdleTimeout ends a logged-in SFTP connection that sent nothing
	// for that long.
	SSHIdleTimeout time.Duration
	// Caps per client address: connections open at once on the HTTPS and
	// SSH ports, and of them those still in their handshake or login.
	HTTPSPerAddress, SSHPerAddress, WaitingPerAddress int
	// Caps on SFTP sessions (channels): per connection and per user.
	SSHSessionsPerConn, SSHSessionsPerUser int
	// ExtraDomains are domain suffixes the box's name is certified under,
	// besides pki.HomeSuffixes and the search domains learned when the CA
	// is made (pki.LearnedDomains).
	ExtraDomains []string
	// AdminPassword (plain or an Argon2id PHC hash) and AdminSSHKey (an
	// authorized_keys line) are taken into the user database at start;
	// the plain password is then blanked in the file (Blank).
	AdminPassword, AdminSSHKey string
	// Limits of the calendars and address books (package calendars).
	CalendarObjectKB, CalendarObjects, CalendarsPerUser int
	// TrashDays is how long deleted files and replaced versions are kept
	// (0: no trash); the trash never holds on to the last TrashReserveMB
	// MiB of free space (store.SetTrashPolicy).
	TrashDays, TrashReserveMB int
	// The copy off the box (package copies): where, the target's
	// password, when each day, the runs' replaced files kept, and the
	// bandwidth (KiB/s, 0: no limit).
	CopyTarget, CopyTargetPassword string
	CopyAt                         time.Duration // after midnight
	CopyKeep, CopyBwLimit          int
	// DataDisk is where the users' data lives: "card", "auto", or a
	// disk's ext4 label or UUID (package datadisk); DataDiskFormat the
	// serial of a disk to adopt at start.
	DataDisk, DataDiskFormat string
	// USB is what the board's USB device port offers a computer it is
	// plugged into (PID 1's gadget): a network link, the console, the
	// start drive; all three by default.
	USB USBFunctions
}

// USBFunctions are the USB device port's functions, each turned off by
// leaving it out of usb_device.
type USBFunctions struct {
	Network, Console, Drive bool
}

// Default returns the configuration used when the file sets nothing.
// The target and concurrency are justified in docs/keys.md.
func Default() Config {
	return Config{
		Hostname:    "bonesync",
		TLSKey:      Auto,
		SSHHostKey:  Auto,
		Target:      500 * time.Millisecond,
		Concurrency: 8,
		PostQuantum: Auto,
		BenchBudget: 90 * time.Second,
		NTP:         []string{"pool.ntp.org"},

		SSHIdleTimeout: 15 * time.Minute,

		HTTPSPerAddress:    64,
		SSHPerAddress:      32,
		WaitingPerAddress:  16,
		SSHSessionsPerConn: 10,
		SSHSessionsPerUser: 32,

		ExtraDomains: []string{"fritz.box"},

		CalendarObjectKB: 1024,
		CalendarObjects:  20000,
		CalendarsPerUser: 50,

		TrashDays:      30,
		TrashReserveMB: 1024,

		CopyAt:   3*time.Hour + 30*time.Minute,
		CopyKeep: 7,

		DataDisk: "card",

		USB: USBFunctions{Network: true, Console: true, Drive: true},
	}
}

// Problem is one thing wrong in the file, reported as file:line: message.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Load reads the file at path. A missing file is not a problem: everything is
// default. A file that cannot be read is one Problem at line 0.
func Load(path string) (Config, []Problem) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return Default(), []Problem{{path, 0, fmt.Sprintf("cannot read: %v; using defaults", err)}}
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse reads a config from r; name is used in Problems.
func Parse(name string, r io.Reader) (Config, []Problem) {
	return parseOnto(Default(), name, r, "")
}

// Overlay reads the file at path onto c, taking only the settings whose
// names start with prefix: the admin page's copy settings ("copy_"), kept
// in the state directory over the config file's. A missing file changes
// nothing.
func Overlay(c Config, path, prefix string) (Config, []Problem) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, []Problem{{path, 0, fmt.Sprintf("cannot read: %v; the config file's settings stand", err)}}
	}
	defer f.Close()
	return parseOnto(c, path, f, prefix)
}

// Line is a setting as a config file writes it, for a file Overlay reads;
// a value on two lines, or with both kinds of quote, has none.
func Line(name, value string) (string, error) {
	if strings.ContainsAny(value, "\r\n") || strings.Contains(value, `"`) && strings.Contains(value, "'") {
		return "", fmt.Errorf("%s: a value on one line, with one kind of quote at most", name)
	}
	q := `"`
	if strings.Contains(value, `"`) {
		q = "'"
	}
	return name + " = " + q + value + q + "\n", nil
}

// parseOnto reads settings from r onto c; with a prefix, only those whose
// names start with it.
func parseOnto(c Config, name string, r io.Reader, prefix string) (Config, []Problem) {
	var probs []Problem
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(stripComment(sc.Text()))
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			probs = append(probs, Problem{name, n, fmt.Sprintf("%q is not of the form name = value", line)})
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), unquote(strings.TrimSpace(v))
		s := lookup(k)
		if s == nil {
			probs = append(probs, Problem{name, n, fmt.Sprintf("unknown setting %q%s", k, suggest(k))})
			continue
		}
		if !strings.HasPrefix(k, prefix) {
			probs = append(probs, Problem{name, n, fmt.Sprintf("%s is not set here, only %s*", k, prefix)})
			continue
		}
		if prev, dup := seen[k]; dup {
			probs = append(probs, Problem{name, n, fmt.Sprintf("%s is set again (first at line %d); the later value wins", k, prev)})
		}
		seen[k] = n
		if err := s.set(&c, v); err != nil {
			probs = append(probs, Problem{name, n, fmt.Sprintf("%s: %v; using the default %s", k, err, s.def)})
		}
	}
	if err := sc.Err(); err != nil {
		probs = append(probs, Problem{name, 0, fmt.Sprintf("read: %v", err)})
	}
	return c, probs
}

// stripComment cuts a line at its comment: the first #, except inside a
// value that starts with a quote, up to that quote's match.
func stripComment(s string) string {
	from := 0
	if eq := strings.IndexByte(s, '='); eq >= 0 && strings.IndexByte(s[:eq], '#') < 0 {
		v := strings.TrimLeft(s[eq+1:], " \t")
		if len(v) > 0 && (v[0] == '"' || v[0] == '\'') {
			start := len(s) - len(v)
			if end := strings.IndexByte(s[start+1:], v[0]); end >= 0 {
				from = start + 1 + end + 1
			}
		}
	}
	if i := strings.IndexByte(s[from:], '#'); i >= 0 {
		return s[:from+i]
	}
	return s
}

// Blank returns raw with the value of every line that sets key replaced
// by spaces: the same length, so the file can be rewritten in place on the
// card, and it reads as empty. It reports whether anything was blanked.
func Blank(raw []byte, key string) ([]byte, bool) {
	out := append([]byte(nil), raw...)
	blanked := false
	start := 0
	for start < len(out) {
		end := start
		for end < len(out) && out[end] != '\n' {
			end++
		}
		line := string(out[start:end])
		body := stripComment(line)
		// The value and any comment after it: an unquoted # may have cut
		// the password, and the rest of it must not stay in clear.
		if k, v, ok := strings.Cut(body, "="); ok && strings.ToLower(strings.TrimSpace(k)) == key && strings.TrimSpace(strings.TrimRight(line[len(k)+1:], "\r")) != "" {
			_ = v
			from := start + len(k) + 1
			for i := from; i < end; i++ {
				if out[i] != '\r' {
					out[i] = ' '
				}
			}
			blanked = true
		}
		start = end + 1
	}
	return out, blanked
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// suggest offers the closest known setting for a misspelt one.
func suggest(k string) string {
	best, bestD := "", 3
	for _, s := range settings {
		if d := distance(k, s.name); d < bestD {
			best, bestD = s.name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func parseInt(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", v)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is outside %d..%d", n, lo, hi)
	}
	return n, nil
}

func parseDuration(v string, lo, hi time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration like 90s or 2m", v)
	}
	if d < lo || d > hi {
		return 0, fmt.Errorf("%v is outside %v..%v", d, lo, hi)
	}
	return d, nil
}

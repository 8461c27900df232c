package flood

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/preview/previewtest"
)

// Hostile is every attack of issue 36 on one bonesync box at once, as a
// household member's account and strangers' addresses can make them: 100
// TLS sessions and 20 SFTP sessions held open; failed logins with 500 KB
// and 40 KB user names from 50 addresses; previews asked of interlaced
// 16-bit PNGs of 4 megapixels (130 KB each, 48 MiB to a plain decoder);
// four PUTs at once, over and over, of calendar objects of 80,000
// properties; and a time-range query over an event that recurs every
// second. `make test`'s hostile test and `make bench`'s abuse block both
// run it, beside a legitimate client that must keep being answered.
type Hostile struct {
	HTTPS, SSH     string // the box's addresses
	User, Password string // the attacker's own account on the box
	// First: the attackers come from Loopback(First) onwards, 60
	// addresses (10 for the sessions, 50 for the long names).
	First int
}

// HostileCounts are the answers the attack got, by part and status
// ("put 403", "login 431", "login error": a connection refused or cut).
type HostileCounts struct {
	mu      sync.Mutex
	answers map[string]int
}

func (c *HostileCounts) add(ctx context.Context, part string, code int, err error) {
	if ctx.Err() != nil {
		return // cut short by the attack's end
	}
	key := fmt.Sprint(part, " ", code)
	if err != nil {
		key = part + " error"
	}
	c.mu.Lock()
	c.answers[key]++
	c.mu.Unlock()
}

// Answers returns the counts, "part status" to how many.
func (c *HostileCounts) Answers() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.answers))
	for k, v := range c.answers {
		m[k] = v
	}
	return m
}

// String lists the answers in order.
func (c *HostileCounts) String() string {
	m := c.Answers()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s ×%d", k, m[k])
	}
	return b.String()
}

// The attack's sizes (issue 36's combined run).
const (
	HostileSessions   = 100    // TLS sessions held, 10 from each of 10 addresses
	HostileSFTP       = 20     // SFTP sessions held
	HostileNamers     = 50     // addresses failing logins with long names
	HostilePictures   = 4      // interlaced 16-bit PNGs of 2048×2048
	HostilePUTs       = 4      // calendar PUTs at once
	HostileProperties = 80_000 // properties in each PUT's object
)

// Prepare puts what the attack asks about into the attacker's account:
// the pictures, and the event that recurs every second. It returns
// when the box has them.
func (h Hostile) Prepare(ctx context.Context) error {
	c := h.client()
	home := h.calendars()
	if _, err := h.do(ctx, c, "PROPFIND", home, "", "Depth", "1"); err != nil { // makes the default calendar
		return fmt.Errorf("the attacker's calendars: %w", err)
	}
	for i := range HostilePictures {
		png := string(previewtest.InterlacedPNG(2048-i, 2048))
		if code, err := h.do(ctx, c, "PUT", h.dav(fmt.Sprintf("hostile%d.png", i)), png); err != nil || code/100 != 2 {
			return fmt.Errorf("PUT of hostile picture %d: %d %v", i, code, err)
		}
	}
	event := "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:secondly\r\nDTSTAMP:20260101T000000Z\r\n" +
		"DTSTART:20260101T000000Z\r\nRRULE:FREQ=SECONDLY\r\nSUMMARY:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	if code, err := h.do(ctx, c, "PUT", home+"personal/secondly.ics", event, "Content-Type", "text/calendar"); err != nil || code/100 != 2 {
		return fmt.Errorf("PUT of the SECONDLY event: %d %v", code, err)
	}
	return nil
}

// Run starts every part of the attack and returns at once: the held
// sessions first, then, once they are open, the rest, which goes on until
// ctx ends. wait waits for the parts to stop and close what they hold.
func (h Hostile) Run(ctx context.Context) (c *HostileCounts, wait func()) {
	c = &HostileCounts{answers: map[string]int{}}
	var wg, opened sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	opened.Add(2)
	run(func() { h.sessions(ctx, c, opened.Done) })
	run(func() { h.sftpSessions(ctx, c, opened.Done) })
	then := func(f func()) {
		run(func() {
			opened.Wait()
			f()
		})
	}
	then(func() {
		Logins(ctx, HostileNamers, h.First+10, func(ctx context.Context, from string) error {
			for _, n := range []int{500 << 10, 40 << 10} {
				code, err := WrongLogin(ctx, h.HTTPS, from, LongName(n))
				c.add(ctx, "login", code, err)
			}
			return nil
		})
	})
	for w := range 2 {
		then(func() { h.previews(ctx, c, w) })
	}
	for w := range HostilePUTs {
		then(func() { h.flatPUTs(ctx, c, w) })
	}
	then(func() { h.queries(ctx, c) })
	return c, wg.Wait
}

// sessions opens the TLS sessions, a PROPFIND on each, says so (opened)
// and holds them.
func (h Hostile) sessions(ctx context.Context, c *HostileCounts, opened func()) {
	var held []net.Conn
	defer func() {
		for _, s := range held {
			s.Close()
		}
	}()
	for i := 0; i < HostileSessions && ctx.Err() == nil; i++ {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(Loopback(h.First + i%10))}, Timeout: time.Minute}
		s, err := tls.DialWithDialer(d, "tcp", h.HTTPS, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			c.add(ctx, "session", 0, err)
			continue
		}
		held = append(held, s)
		req, _ := http.NewRequest("PROPFIND", "https://box"+h.home(), nil)
		req.Header.Set("Depth", "1")
		req.SetBasicAuth(h.User, h.Password)
		req.Write(s)
		resp, err := http.ReadResponse(bufio.NewReader(s), req)
		if err != nil {
			c.add(ctx, "session", 0, err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		c.add(ctx, "session", resp.StatusCode, nil)
	}
	opened()
	<-ctx.Done()
}

// sftpSessions logs in the SFTP sessions, says so (opened) and holds them.
func (h Hostile) sftpSessions(ctx context.Context, c *HostileCounts, opened func()) {
	var held []io.Closer
	defer func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i].Close()
		}
	}()
	for i := 0; i < HostileSFTP && ctx.Err() == nil; i++ {
		conn, err := ssh.Dial("tcp", h.SSH, &ssh.ClientConfig{User: h.User, Timeout: time.Minute,
			Auth: []ssh.AuthMethod{ssh.Password(h.Password)}, HostKeyCallback: ssh.InsecureIgnoreHostKey()})
		if err != nil {
			c.add(ctx, "sftp", 0, err)
			continue
		}
		held = append(held, conn)
		s, err := sftp.NewClient(conn)
		if err == nil {
			held = append(held, s)
			_, err = s.ReadDir("/")
		}
		c.add(ctx, "sftp", 200, err)
	}
	opened()
	<-ctx.Done()
}

// WrongLogin is a WebDAV PROPFIND to addr (host:port) from the loopback
// address from, with Basic credentials of user and a wrong password, on
// a connection of its own; it returns the status.
func WrongLogin(ctx context.Context, addr, from, user string) (int, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: time.Minute}
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: d.DialContext,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}
	req, _ := http.NewRequestWithContext(ctx, "PROPFIND", "https://"+addr+"/dav/", nil)
	req.SetBasicAuth(user, "not the password")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// LongName is a user name of n bytes that begins with a terminal's
// escape codes, as the long-name attacks send.
func LongName(n int) string { return "\x1b[31m\x1b]0;owned\x07" + strings.Repeat("n", n) }

// previews asks for the hostile pictures' previews, every size, over and over.
func (h Hostile) previews(ctx context.Context, c *HostileCounts, w int) {
	cl := h.client()
	for i := w; ctx.Err() == nil; i++ {
		u := fmt.Sprintf("https://%s/index.php/core/preview.png?file=/hostile%d.png&x=%d&y=%[3]d&a=1", h.HTTPS, i%HostilePictures, 256<<(i%3))
		code, err := h.do(ctx, cl, "GET", u, "")
		c.add(ctx, "preview", code, err)
	}
}

// flatPUTs puts, over and over, an object of HostileProperties properties.
func (h Hostile) flatPUTs(ctx context.Context, c *HostileCounts, w int) {
	cl := h.client()
	flat := fmt.Sprintf("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:flat%d\r\nDTSTAMP:20260101T000000Z\r\n", w) +
		strings.Repeat("X-A:b\r\n", HostileProperties) + "END:VEVENT\r\nEND:VCALENDAR\r\n"
	for ctx.Err() == nil {
		code, err := h.do(ctx, cl, "PUT", fmt.Sprintf("%spersonal/flat%d.ics", h.calendars(), w), flat, "Content-Type", "text/calendar")
		c.add(ctx, "put", code, err)
	}
}

// queries asks, over and over, for a month of the calendar holding the
// SECONDLY event, as a phone does.
func (h Hostile) queries(ctx context.Context, c *HostileCounts) {
	cl := h.client()
	query := `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop>` +
		`<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"><c:time-range start="20261201T000000Z" end="20270101T000000Z"/>` +
		`</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`
	for ctx.Err() == nil {
		code, err := h.do(ctx, cl, "REPORT", h.calendars()+"personal/", query, "Depth", "1", "Content-Type", "application/xml")
		c.add(ctx, "query", code, err)
	}
}

func (h Hostile) client() *http.Client {
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
}

func (h Hostile) home() string        { return "/remote.php/dav/files/" + h.User + "/" }
func (h Hostile) dav(p string) string { return "https://" + h.HTTPS + h.home() + p }
func (h Hostile) calendars() string {
	return "https://" + h.HTTPS + "/remote.php/dav/calendars/" + h.User + "/"
}

// do sends one request as the attacker, with header pairs, and returns
// the status; the answer's body is read and dropped.
func (h Hostile) do(ctx context.Context, c *http.Client, method, url, body string, header ...string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.SetBasicAuth(h.User, h.Password)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// attackerEnv carries a Hostile to the process that runs it.
const attackerEnv = "BONESYNC_HOSTILE_ATTACKER"

// Attacker runs h in a process of its own, this program again at the
// lowest CPU priority (nice 19), as if from another machine: the box's
// cores are the box's, not shared with the attack it must answer, and the
// legitimate client beside it is not scheduled behind the attack's
// goroutines in one Go runtime. The program must call AttackIfAsked
// first thing (a TestMain, a main). stop ends the attack and returns its
// answers.
func (h Hostile) Attacker(ctx context.Context) (stop func() (*HostileCounts, error), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "nice", "-n", "19", self)
	cmd.Env = append(os.Environ(), attackerEnv+"="+string(spec))
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the attacker: %w", err)
	}
	return func() (*HostileCounts, error) {
		in.Close()
		if err := cmd.Wait(); err != nil {
			return nil, fmt.Errorf("the attacker: %w", err)
		}
		c := &HostileCounts{}
		if err := json.Unmarshal(out.Bytes(), &c.answers); err != nil {
			return nil, fmt.Errorf("the attacker's answers %q: %w", out.Bytes(), err)
		}
		return c, nil
	}, nil
}

// AttackIfAsked, in a process that Attacker started, runs the attack
// until its standard input closes, writes the answers to its standard
// output and exits. Elsewhere it returns at once.
func AttackIfAsked() {
	spec := os.Getenv(attackerEnv)
	if spec == "" {
		return
	}
	var h Hostile
	if err := json.Unmarshal([]byte(spec), &h); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", attackerEnv, err)
		os.Exit(2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c, wait := h.Run(ctx)
	io.Copy(io.Discard, os.Stdin)
	cancel()
	wait()
	if err := json.NewEncoder(os.Stdout).Encode(c.Answers()); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

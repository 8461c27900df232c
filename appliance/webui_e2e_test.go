package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/jpeg"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// testBrowser drives the web pages in Debian's headless Chromium, as a new
// user would: log in, upload two files and a folder through the file
// inputs, rename, delete and restore from the trash, download a folder as
// a zip, log out. Screenshots of every page at 1280 and 360 px, light and
// dark, go to out/screenshots/ for review.
func testBrowser(t *testing.T, b *box) {
	ctx := chromium(t, b)
	base := "https://127.0.0.1:" + b.port(b.https)
	where := func() string { loc, _ := chromedp.Run(ctx, chromedp.Location()); return loc }
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s (at %s): %v", what, where(), err)
		}
	}
	eval := func(what, js string) any {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		if err != nil {
			t.Fatalf("%s (at %s): %v", what, where(), err)
		}
		return v
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	shots := filepath.Join("..", "out", "screenshots")
	os.MkdirAll(shots, 0o755)
	// shoot screenshots the page at each size (a laptop and a phone, unless
	// given) in both schemes, and checks
	// at each that nothing is wider than the screen.
	shoot := func(name string, sizes ...[2]int64) {
		t.Helper()
		if sizes == nil {
			sizes = [][2]int64{{1280, 800}, {360, 800}}
		}
		for _, size := range sizes {
			width := size[0]
			for _, scheme := range []string{"light", "dark"} {
				opts := []chromedp.EmulateViewportOption{}
				if width < 500 {
					opts = append(opts, chromedp.EmulateMobile, chromedp.EmulatePortrait)
				}
				do("size the window", chromedp.EmulateViewport(width, size[1], opts...))
				if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
					Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
					t.Fatal(err)
				}
				do("settle", chromedp.Sleep(150*time.Millisecond))
				if wide, _ := eval("width", `document.documentElement.scrollWidth > window.innerWidth`).(bool); wide {
					t.Errorf("the %s page is wider than %d px", name, width)
				}
				png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatalf("screenshot of %s: %v", name, err)
				}
				os.WriteFile(filepath.Join(shots, fmt.Sprintf("%s-%d-%s.png", name, width, scheme)), png, 0o644)
			}
		}
		do("reset the window", chromedp.EmulateViewport(1280, 900))
		chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
	}
	// accessible checks the page as assistive technology meets it, in both
	// colour schemes: in Chromium's own accessibility tree (what a screen
	// reader is given) every control and image has a name; Tab reaches
	// every control, and each shows that it has the focus; text has WCAG
	// AA contrast against what is behind it.
	problems := func(name string) []string {
		t.Helper()
		var found []string
		tree, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		if err != nil {
			t.Fatalf("the accessibility tree of the %s page: %v", name, err)
		}
		for _, n := range tree.Nodes {
			if n.Ignored || n.Role == nil || !needsName[axString(n.Role)] || strings.TrimSpace(axString(n.Name)) != "" {
				continue
			}
			html, _ := chromedp.Call(ctx, dom.GetOuterHTML, dom.GetOuterHTMLParams{BackendNodeID: n.BackendDOMNodeID})
			found = append(found, fmt.Sprintf("a %s without a name for a screen reader: %.100s", axString(n.Role), html.OuterHTML))
		}
		for _, scheme := range []string{"light", "dark"} {
			if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
				t.Fatal(err)
			}
			low, _ := eval("contrast on "+name, lowContrastJS).([]any)
			for _, l := range low {
				found = append(found, fmt.Sprintf("%s: text below WCAG AA contrast: %v", scheme, l))
			}
			n, _ := eval("controls on "+name, markFocusableJS).(float64)
			reached := map[string]bool{}
			// The walk starts at the top of the page, not where the last
			// one ended (blur leaves Chrome's starting point there): the
			// focus on an element before every control, out of the order.
			eval("top of "+name, tabStartJS)
			// A few Tabs more than controls: a date field takes a Tab per
			// part (day, month, year).
			for i := 0; i < int(n)+8; i++ {
				do("Tab", chromedp.KeyEvent(kb.Tab))
				at, _ := eval("focus on "+name, focusedJS).(map[string]any)
				if id, _ := at["id"].(string); id != "" && !reached[id] {
					reached[id] = true
					if ring, _ := at["ring"].(bool); !ring {
						found = append(found, fmt.Sprintf("%s: the focus on %v does not show", scheme, at["html"]))
					}
				}
			}
			missed, _ := eval("unreached on "+name, fmt.Sprintf(unreachedJS, strings.Join(slices.Collect(maps.Keys(reached)), ","))).([]any)
			for _, m := range missed {
				found = append(found, fmt.Sprintf("%s: Tab never reaches %v", scheme, m))
			}
			eval("blur on "+name, `document.activeElement && document.activeElement.blur(), document.getElementById('tab-walk-start')?.remove(), 0`)
		}
		chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		return found
	}
	// accessible checks the page as assistive technology meets it, in both
	// colour schemes: in Chromium's own accessibility tree (what a screen
	// reader is given) every control and image has a name; Tab reaches
	// every control, and each shows that it has the focus; text has WCAG
	// AA contrast against what is behind it.
	accessible := func(name string) {
		t.Helper()
		for _, p := range problems(name) {
			t.Errorf("the %s page: %s", name, p)
		}
	}

	// A browser is sent to the login page, not a Basic-auth dialog.
	do("open /dav/", chromedp.Navigate(base+"/dav/"), chromedp.WaitVisible(chromedp.ID("username")))
	if loc := where(); !strings.Contains(loc, "/login?next=") {
		t.Errorf("a browser at /dav/ lands on %s, want the login page", loc)
	}
	shoot("login")
	accessible("login")
	// The checks find what they look for: a nameless button, grey on white
	// text, a control without a focus ring and one Tab cannot reach.
	// (Styles set through the CSSOM: the page's CSP refuses style attributes.)
	eval("break the page", `(() => {
		document.body.insertAdjacentHTML('beforeend', '<button id="x-nameless"></button><p id="x-faint">faint</p>' +
			'<a id="x-noring" href="#">no ring</a><span id="x-unreachable" tabindex="0"></span>');
		const faint = document.getElementById('x-faint');
		faint.style.color = '#aaa';
		faint.style.background = '#fff';
		const noring = document.getElementById('x-noring');
		noring.style.outline = 'none';
		noring.style.boxShadow = 'none';
		document.getElementById('x-unreachable').addEventListener('focus', e => e.target.blur());
		return 0;
	})()`)
	broken := strings.Join(problems("broken login"), "\n")
	for _, want := range []string{"x-nameless", "faint", "x-noring", "x-unreachable"} {
		if !strings.Contains(broken, want) {
			t.Errorf("the accessibility checks missed %s on a page broken on purpose:\n%s", want, broken)
		}
	}
	do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("username")))
	do("log in",
		chromedp.SendKeys(chromedp.ID("username"), "admin"),
		chromedp.SendKeys(chromedp.ID("password"), b.password),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("new-folder")),
	)
	if loc := where(); !strings.HasSuffix(loc, "/files/") {
		t.Errorf("after login: %s, want /files/ (where /dav/ sends a browser)", loc)
	}

	// Upload two files and a folder through the file inputs.
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "one.txt"), []byte("the first file\n"), 0o644)
	os.WriteFile(filepath.Join(src, "two.txt"), []byte("the second file\n"), 0o644)
	album := filepath.Join(src, "album")
	os.MkdirAll(filepath.Join(album, "day 2"), 0o755)
	want := map[string]string{}
	for i, p := range []string{"cover.svg", "notes.md", "day 2/beach.bin"} {
		var body []byte
		switch i {
		case 0:
			body = []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><rect width="120" height="80" fill="#2a9d8f"/></svg>`)
		case 1:
			body = []byte("# Album\n\nNotes about the pictures.\n")
		default:
			body = make([]byte, 300<<10)
			for j := range body {
				body[j] = byte(j * 7)
			}
		}
		os.WriteFile(filepath.Join(album, p), body, 0o644)
		want["album/"+p] = string(body)
	}
	old := time.Date(2021, 6, 1, 12, 0, 0, 0, time.UTC)
	os.Chtimes(filepath.Join(src, "one.txt"), old, old)
	do("upload two files",
		chromedp.SetUploadFiles(chromedp.ID("pick-files"), []string{filepath.Join(src, "one.txt"), filepath.Join(src, "two.txt")}),
		chromedp.WaitVisible(css(`tr[data-name="two.txt"]`)),
		chromedp.WaitVisible(css(`tr[data-name="one.txt"]`)),
	)
	do("upload a folder",
		chromedp.SetUploadFiles(chromedp.ID("pick-folder"), []string{album}),
		chromedp.WaitVisible(css(`tr[data-name="album"]`)),
	)
	// A large file through the page streams to the disk: the server's
	// peak memory does not grow with it (the board has 512 MB). Its peak
	// is reset first (/proc/PID/clear_refs). A 4 GiB file, run the same
	// way once by hand, took 60 s and left the peak at 39.5 MB.
	big := filepath.Join(src, "large.bin")
	if f, err := os.Create(big); err == nil {
		f.Truncate(512 << 20) // sparse here; 512 MiB of zeros for the browser and the box
		f.Close()
	}
	resetPeak(t, b.cmd.Process.Pid)
	before := statusKB(t, b.cmd.Process.Pid, "VmRSS")
	do("upload 512 MiB",
		chromedp.SetUploadFiles(chromedp.ID("pick-files"), []string{big}),
		chromedp.WaitVisible(css(`tr[data-name="large.bin"]`)),
	)
	peak := statusKB(t, b.cmd.Process.Pid, "VmHWM")
	t.Logf("a 512 MiB upload through the page: the server's resident set %.1f MB before, peak %.1f MB", float64(before)/1000, float64(peak)/1000)
	if peak-before > 32000 {
		t.Errorf("the server's peak resident set grew by %d kB during a 512 MiB upload: not streamed", peak-before)
	}
	if code, hdrs := b.head("-u", b.admin(), b.url("large.bin")); code != 200 || !strings.Contains(strings.ToLower(hdrs), "content-length: 536870912") {
		t.Errorf("large.bin on the box: %d\n%s", code, hdrs)
	}
	if code, body := b.curl("-u", b.admin(), b.url("album/day%202/beach.bin")); code != 200 || body != want["album/day 2/beach.bin"] {
		t.Errorf("the folder's file over WebDAV: %d, %d bytes", code, len(body))
	}
	if code, hdrs := b.head("-u", b.admin(), b.url("one.txt")); code != 200 || !strings.Contains(hdrs, "2021") {
		t.Errorf("one.txt lost its date in the upload: %d\n%s", code, hdrs)
	}
	accessible("files")
	shoot("files")
	// At 1280 px each row's actions are on one line (they wrapped onto two).
	if one, _ := eval("actions", `[...document.querySelectorAll('.acts')].every(a => new Set([...a.children].map(c => c.getBoundingClientRect().top)).size <= 1)`).(bool); !one {
		t.Error("at 1280 px a file's actions wrap onto two lines")
	}

	// Rename one file in the page's dialog.
	do("rename",
		chromedp.Click(css(`tr[data-name="one.txt"] button[data-act="rename"]`)),
		chromedp.WaitVisible(chromedp.ID("ask-input")),
		chromedp.SetValue(chromedp.ID("ask-input"), "first.txt"),
		chromedp.Click(chromedp.ID("ask-ok")),
		chromedp.WaitVisible(css(`tr[data-name="first.txt"]`)),
	)
	// Delete one, find it in the trash, restore it.
	do("delete",
		chromedp.Click(css(`tr[data-name="two.txt"] button[data-act="delete"]`)),
		chromedp.WaitNotPresent(css(`tr[data-name="two.txt"]`)),
	)
	do("open the trash", chromedp.Navigate(base+"/trash/"), chromedp.WaitVisible(css(`tr[data-path="/two.txt"]`)))
	shoot("trash")
	accessible("trash")
	do("restore",
		chromedp.Click(css(`tr[data-path="/two.txt"] button[value="restore"]`)),
		chromedp.WaitVisible(css(".flash")),
	)
	if flash, _ := chromedp.Run(ctx, chromedp.Text(css(".flash"))); !strings.Contains(flash, "/two.txt") {
		t.Errorf("restore said %q", flash)
	}
	if code, body := b.curl("-u", b.admin(), b.url("two.txt")); code != 200 || body != "the second file\n" {
		t.Errorf("two.txt after the restore: %d %q", code, body)
	}

	// Previews of a text and an image.
	do("preview text", chromedp.Navigate(base+"/files/album/notes.md?view"), chromedp.WaitVisible(css("pre.preview")))
	shoot("preview")
	accessible("preview")
	do("preview image", chromedp.Navigate(base+"/files/album/cover.svg?view"), chromedp.WaitVisible(css("figure.preview img")))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('figure.preview img').naturalWidth > 0`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Errorf("the image preview did not load: %v", err)
	}

	// Download the folder as a zip and compare.
	dl := t.TempDir()
	events := true
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dl, EventsEnabled: &events}); err != nil {
		t.Fatal(err)
	}
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	do("download the zip",
		chromedp.Navigate(base+"/files/"),
		chromedp.WaitVisible(css(`tr[data-name="album"]`)),
		chromedp.Click(css(`tr[data-name="album"] a[download]`)),
	)
	var guid string
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("the zip download: %v", err)
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			guid = ev.GUID
			break
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			t.Fatal("the zip download was cancelled")
		}
	}
	zr, err := zip.OpenReader(filepath.Join(dl, guid))
	if err != nil {
		t.Fatalf("the downloaded zip: %v", err)
	}
	got := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		if !strings.HasSuffix(f.Name, "/") {
			got[f.Name] = readAllString(rc)
		}
		rc.Close()
	}
	zr.Close()
	if !sameContents(got, want) {
		t.Errorf("the zip holds %v, want %v", keys(got), keys(want))
	}

	// Pictures: thumbnails in the list, the photos page; a folder shared by
	// a link with a password, and the link's page in a browser with no
	// session (a context of its own), its gallery and its download.
	photo := filepath.Join(b.work, "album.jpg")
	os.WriteFile(photo, testJPEG(), 0o644)
	b.curl("-u", b.admin(), "-X", "MKCOL", b.url("Album"))
	if code, _ := b.curl("-u", b.admin(), "-T", photo, b.url("Album/beach.jpg")); code != 201 {
		t.Fatalf("PUT beach.jpg = %d", code)
	}
	loaded := func(what, sel string) {
		t.Helper()
		if ok, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll('`+sel+`')].length > 0 && [...document.querySelectorAll('`+sel+`')].every(i => i.complete && i.naturalWidth > 0)`,
			chromedp.WithPollingTimeout(20*time.Second))); err != nil || !ok {
			t.Errorf("%s: the pictures did not load: %v", what, err)
		}
	}
	do("the album", chromedp.Navigate(base+"/files/Album/"), chromedp.WaitVisible(css("img.thumb")))
	loaded("the file list's thumbnails", "img.thumb")
	do("photos", chromedp.Navigate(base+"/photos"), chromedp.WaitVisible(css(".grid img")))
	loaded("the photos page", ".grid img")
	accessible("photos")
	shoot("photos")
	do("share by link",
		chromedp.Navigate(base+"/shares?path=/Album"),
		chromedp.WaitVisible(chromedp.ID("share")),
		chromedp.SetValue(chromedp.ID("share-with"), "*link"),
		chromedp.SendKeys(chromedp.ID("share-password"), "beach-party"),
		chromedp.Click(chromedp.ID("share")),
		chromedp.WaitVisible(chromedp.ID("new-link")),
	)
	link, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-link")))
	if err != nil {
		t.Fatal(err)
	}
	accessible("shares")
	shoot("shares")
	pctx, cancelP := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancelP()
	owner := ctx
	ctx = pctx // the helpers act on the guest's browser now
	do("open the link", chromedp.Navigate(linkOn(base, link)),
		chromedp.WaitVisible(chromedp.ID("link-password")))
	accessible("public-link-password")
	shoot("public-link-password")
	do("give the password",
		chromedp.SendKeys(chromedp.ID("link-password"), "beach-party"),
		chromedp.Click(chromedp.ID("unlock")),
		chromedp.WaitVisible(css(".grid img")),
	)
	loaded("the link's gallery", ".grid img")
	if page, _ := chromedp.Run(ctx, chromedp.OuterHTML(css("html"))); strings.Contains(page, "Log out") || strings.Contains(page, "admin") {
		t.Error("the link's page names the box's account or menu")
	}
	accessible("public-link")
	shoot("public-link")
	ctx = owner

	// The account and admin pages.
	do("account", chromedp.Navigate(base+"/account"), chromedp.WaitVisible(chromedp.ID("app-label")))
	accessible("account")
	shoot("account")
	do("admin", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(chromedp.ID("new-user")))
	accessible("admin")
	shoot("admin")
	// The pages a newcomer meets: the welcome page over plain HTTP (and
	// /trust), the status page, and the connect page, at a laptop's and
	// two phones' sizes.
	newcomer := [][2]int64{{1280, 800}, {390, 844}, {360, 800}}
	do("welcome", chromedp.Navigate("http://"+b.http+"/"), chromedp.WaitVisible(chromedp.ID("fingerprint")))
	accessible("welcome")
	shoot("welcome", newcomer...)
	do("status", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("ca-fingerprint")))
	accessible("status")
	shoot("status", newcomer...)
	do("connect", chromedp.Navigate(base+"/connect"), chromedp.WaitVisible(chromedp.ID("make-rclone")))
	accessible("connect")
	shoot("connect", newcomer...)
	// Measure again, as the console's bench does, with live progress.
	do("admin again", chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(chromedp.ID("measure")))
	do("measure again",
		chromedp.Click(chromedp.ID("measure")),
		chromedp.WaitVisible(chromedp.ID("bench-log")),
	)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('bench-log') && /benchmarking/.test(document.getElementById('bench-log').textContent)`,
		chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Errorf("no progress shown while measuring: %v", err)
	}
	shoot("admin-measuring")
	// When it is done the page reloads itself with the new report.
	ended := false
	for end := time.Now().Add(3 * time.Minute); !ended && time.Now().Before(end); time.Sleep(time.Second) {
		ended, _ = chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.getElementById('measure') && !document.getElementById('measure').disabled && document.getElementById('bench').dataset.running === 'false'`))
	}
	if !ended {
		progress, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('bench-log').textContent`))
		t.Errorf("the measurement did not end in 3 minutes; the page shows:\n%s", progress)
	}

	// Log out: /files/ is closed.
	do("log out",
		chromedp.Click(chromedp.ID("logout")),
		chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.Navigate(base+"/files/"),
		chromedp.WaitVisible(chromedp.ID("username")),
	)
	if loc := where(); !strings.Contains(loc, "/login") {
		t.Errorf("after logout /files/ shows %s, want the login page", loc)
	}
	if page, _ := chromedp.Run(ctx, chromedp.OuterHTML(css("html"))); strings.Contains(page, "first.txt") {
		t.Error("after logout a page still lists the files")
	}
}

// readAllString reads r to its end (a failed read shows as a short body).
// chromium starts Debian's headless Chromium for a test and returns its
// context, for 8 minutes. It trusts b's certificate by its key (the box's
// CA is not in the test machine's store), read off a handshake: a box
// started again on the same state keeps its key.
func chromium(t *testing.T, b *box) context.Context {
	t.Helper()
	need(t, "chromium")
	conn, err := tls.Dial("tcp", b.https, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	leaf := conn.ConnectionState().PeerCertificates[0]
	conn.Close()
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath("/usr/bin/chromium"),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("ignore-certificate-errors-spki-list", base64.StdEncoding.EncodeToString(spki[:])),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser, without a timeout
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 8*time.Minute)
	t.Cleanup(cancelT)
	return ctx
}

func readAllString(r io.Reader) string {
	b, _ := io.ReadAll(r)
	return string(b)
}

func sameContents(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s (%d B)", k, len(v)))
	}
	sort.Strings(out)
	return out
}

// webSession logs in through the login form with Go's client, as a
// browser would, and returns a client for the pages, the session's cookie
// header and its CSRF token.
func webSession(t *testing.T, b *box, user, pw string) (*http.Client, string, string) {
	t.Helper()
	pem, err := os.ReadFile(b.caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	c := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	base := "https://localhost:" + b.port(b.https)
	resp, err := c.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	page := readAllString(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	var loginCookie string
	for _, ck := range resp.Cookies() {
		loginCookie = ck.Name + "=" + ck.Value
	}
	if m == nil || loginCookie == "" {
		t.Fatalf("the login page: %s", page)
	}
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(url.Values{"csrf": {m[1]}, "username": {user}, "password": {pw}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", loginCookie)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session string
	for _, ck := range resp.Cookies() {
		if ck.MaxAge > 0 {
			session = ck.Name + "=" + ck.Value
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == "" {
		t.Fatalf("log in: %s", resp.Status)
	}
	req, _ = http.NewRequest("GET", base+"/trash/", nil)
	req.Header.Set("Cookie", session)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page = readAllString(resp.Body)
	resp.Body.Close()
	m = regexp.MustCompile(`<meta name="csrf" content="([^"]+)">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the trash page: %s", page)
	}
	return c, session, m[1]
}

// testTrash: a file deleted over WebDAV and one overwritten over SFTP are
// both in the trash, invisible to WebDAV and SFTP, and restored from the
// web page.
func testTrash(t *testing.T, b *box) {
	f := filepath.Join(b.work, "trash-me.txt")
	os.WriteFile(f, []byte("deleted over WebDAV\n"), 0o644)
	if code, _ := b.curl("-u", b.admin(), "-T", f, b.url("trash-me.txt")); code != 201 {
		t.Fatalf("PUT = %d", code)
	}
	if code, _ := b.curl("-u", b.admin(), "-X", "DELETE", b.url("trash-me.txt")); code != 204 {
		t.Fatalf("DELETE = %d", code)
	}
	v1, v2 := filepath.Join(b.work, "v1.txt"), filepath.Join(b.work, "v2.txt")
	os.WriteFile(v1, []byte("the first version, over SFTP\n"), 0o644)
	os.WriteFile(v2, []byte("the second version\n"), 0o644)
	if out, ok := b.sftp("admin", "password:"+b.password, "put "+v1+" versioned.txt", "put "+v2+" versioned.txt"); !ok {
		t.Fatalf("sftp put twice: %s", out)
	}
	// Neither protocol lists the trash.
	if code, body := b.curl("-u", b.admin(), "-X", "PROPFIND", "-H", "Depth: infinity", b.url("")); code != 207 || strings.Contains(body, "trash-me") || strings.Contains(body, "bonesync") {
		t.Errorf("PROPFIND shows the trash: %d\n%.500s", code, body)
	}
	if out, _ := b.sftp("admin", "password:"+b.password, "ls -la /"); strings.Contains(out, "trash-me") || strings.Contains(out, ".bonesync") {
		t.Errorf("SFTP lists the trash:\n%s", out)
	}

	c, session, tok := webSession(t, b, "admin", b.password)
	base := "https://localhost:" + b.port(b.https)
	req, _ := http.NewRequest("GET", base+"/trash/", nil)
	req.Header.Set("Cookie", session)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page := readAllString(resp.Body)
	resp.Body.Close()
	ids := map[string]string{}
	for _, m := range regexp.MustCompile(`data-id="([^"]+)" data-path="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if _, seen := ids[m[2]]; !seen { // newest first
			ids[m[2]] = m[1]
		}
	}
	if ids["/trash-me.txt"] == "" || ids["/versioned.txt"] == "" {
		t.Fatalf("the trash page lacks the deleted file or the old version: %v\n%s", ids, page)
	}
	for _, p := range []string{"/trash-me.txt", "/versioned.txt"} {
		req, _ := http.NewRequest("POST", base+"/trash/", strings.NewReader(url.Values{"csrf": {tok}, "action": {"restore"}, "id": {ids[p]}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Cookie", session)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("restore %s: %s", p, resp.Status)
		}
	}
	if code, body := b.curl("-u", b.admin(), b.url("trash-me.txt")); code != 200 || body != "deleted over WebDAV\n" {
		t.Errorf("the restored delete: %d %q", code, body)
	}
	if code, body := b.curl("-u", b.admin(), b.url("versioned.txt")); code != 200 || body != "the first version, over SFTP\n" {
		t.Errorf("the restored version: %d %q", code, body)
	}
}

// needsName are the roles a screen reader must be able to name: controls
// and images.
var needsName = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true, "radio": true,
	"combobox": true, "listbox": true, "menuitem": true, "tab": true, "switch": true, "slider": true,
	"spinbutton": true, "image": true,
}

// axString is an accessibility value as a string ("" if none).
func axString(v *accessibility.Value) string {
	if v == nil {
		return ""
	}
	var s string
	if json.Unmarshal(v.Value, &s) != nil {
		return ""
	}
	return s
}

// lowContrastJS lists the visible text whose contrast with the colour
// behind it is under WCAG 2's AA level: 4.5:1, or 3:1 for large text (24
// px, or 18.66 px bold). The background is the nearest one painted,
// semi-transparent ones blended in; disabled controls are exempt.
const lowContrastJS = `(() => {
	const rgba = s => { const m = s.match(/[\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
	const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
	const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
	const behind = e => {
		const layers = [];
		for (let a = e; a; a = a.parentElement) {
			const c = rgba(getComputedStyle(a).backgroundColor);
			if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
		}
		let bg = [255, 255, 255, 1];
		for (const c of layers.reverse()) bg = over(c, bg);
		return bg;
	};
	const out = [];
	for (const e of document.body.querySelectorAll('*')) {
		if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
		if (!e.getClientRects().length || e.closest('[hidden],dialog:not([open])') || e.matches(':disabled')) continue;
		const st = getComputedStyle(e);
		if (st.visibility !== 'visible' || Number(st.opacity) === 0) continue;
		const bg = behind(e), fg = over(rgba(st.color), bg);
		const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
		const ratio = (hi + 0.05) / (lo + 0.05);
		const size = parseFloat(st.fontSize), large = size >= 24 || (size >= 18.66 && Number(st.fontWeight) >= 700);
		if (ratio < (large ? 3 : 4.5)) out.push(ratio.toFixed(2) + ':1 ' + e.outerHTML.slice(0, 80));
	}
	return out;
})()`

// markFocusableJS numbers the page's visible controls that Tab should
// reach and returns how many there are.
const markFocusableJS = `(() => {
	let n = 0;
	for (const e of document.querySelectorAll('a[href],button,input,select,textarea,summary,[tabindex]')) {
		delete e.dataset.tab;
		if (e.matches(':disabled,[type=hidden],[tabindex="-1"]') || !e.getClientRects().length ||
			e.closest('[hidden],dialog:not([open]),details:not([open]) > :not(summary)')) continue;
		e.dataset.tab = String(n++);
	}
	return n;
})()`

// tabStartJS puts the focus on an element out of the Tab order before
// every control, so that the next Tab reaches the first.
const tabStartJS = `(() => {
	let s = document.getElementById('tab-walk-start');
	if (!s) {
		s = document.createElement('span');
		s.id = 'tab-walk-start';
		s.tabIndex = -1;
		document.body.prepend(s);
	}
	s.focus();
	return 0;
})()`

// focusedJS is the control that has the focus: its number, whether a
// focus indicator shows (an outline or a shadow), and its markup.
const focusedJS = `(() => {
	const e = document.activeElement;
	if (!e || !e.dataset || e.dataset.tab === undefined) return {};
	const st = getComputedStyle(e);
	const ring = (st.outlineStyle !== 'none' && parseFloat(st.outlineWidth) > 0) || st.boxShadow !== 'none';
	return {id: e.dataset.tab, ring: ring, html: e.outerHTML.slice(0, 80)};
})()`

// unreachedJS (with the numbers Tab reached) lists the controls it did not.
const unreachedJS = `(() => {
	const reached = new Set('%s'.split(','));
	return [...document.querySelectorAll('[data-tab]')].filter(e => !reached.has(e.dataset.tab)).map(e => e.outerHTML.slice(0, 80));
})()`

// linkOn is a link's page on base (the box as this test reaches it: the
// link names the host the page was asked by).
func linkOn(base, link string) string {
	if i := strings.Index(link, "/index.php/s/"); i >= 0 {
		return base + link[i:]
	}
	return link
}

// testJPEG is a small photo.
func testJPEG() []byte {
	m := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for i := 0; i < len(m.Pix); i += 4 {
		m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = byte(i/2560), 120, byte(255-i/5120), 255
	}
	var b bytes.Buffer
	jpeg.Encode(&b, m, nil)
	return b.Bytes()
}

// testWelcomeSteps follows the welcome page's own steps for Chrome and
// Chromium on Linux, as printed, into a fresh home's NSS database, and then
// opens the box in Debian's headless Chromium with no certificate
// exception: the status page must load. The same browser in a home
// without the steps must not (else the test proves nothing). The page's
// steps said "update-ca-certificates", which Chromium does not read.
func testWelcomeSteps(t *testing.T, b *box) {
	need(t, "chromium", "certutil", "curl")
	resp, err := http.Get("http://" + b.http + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`(?s)<pre data-steps="linux-chrome">(.*?)</pre>`).FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("GET http://%s/ = %s, without the Linux Chrome steps:\n%s", b.http, resp.Status, page)
	}
	steps := html.UnescapeString(string(m[1]))
	open := func(home string) string {
		t.Helper()
		cmd := exec.Command("chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--user-data-dir="+filepath.Join(home, "profile"), "--timeout=15000", "--dump-dom", "https://"+b.https+"/")
		cmd.Env = append(os.Environ(), "HOME="+home)
		out, _ := cmd.Output()
		return string(out)
	}
	if dom := open(t.TempDir()); strings.Contains(dom, "Install the CA") {
		t.Fatal("Chromium opened the box without the CA installed: this test shows nothing")
	}
	home := t.TempDir()
	sh := exec.Command("sh", "-ec", steps)
	sh.Dir, sh.Env = home, append(os.Environ(), "HOME="+home)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the page's steps, as printed:\n%s\nfailed: %v\n%s", steps, err, out)
	}
	if dom := open(home); !strings.Contains(dom, "Install the CA") {
		t.Errorf("after the page's steps Chromium still does not open https://%s/:\n%.600s", b.https, dom)
	}
}

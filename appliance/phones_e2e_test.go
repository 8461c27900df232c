package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// testPhones loads every page of the web UI, logged in as the admin where
// it needs a login, on a phone's 390x844 screen and a laptop's 1280x800,
// and fails where a page is wider than the screen, naming the widest
// element past its edge. The pages come from the routes the server
// registers (server/testdata/routes.txt, which the server's own test holds
// to them): a GET route open to a browser that is neither loaded here nor
// in notPages fails the test. On the phone the menu is one row at most 52
// px tall that shows the page's own entry, and a fingerprint wraps only
// where report.FingerprintHTML lets it (between the CA's hex pairs). The
// admin's user rows keep their labels on a phone (adminLabels); a link's
// copy button copies it (copyLink).
func testPhones(t *testing.T, b *box) {
	ctx := chromium(t, b, 5*time.Minute)
	base := "https://127.0.0.1:" + b.port(b.https)

	// What the pages show: a folder with a long-named file, a deleted file
	// and an earlier version in the trash, links to the folder (with a
	// password) and to a file, a deleted user's data, an app's login flow.
	long := "a-file-named-at-length-as-cameras-and-scanners-name-them-2026-12-03.txt"
	f := filepath.Join(b.work, "phone.txt")
	os.WriteFile(f, []byte("on a phone\n"), 0o644)
	b.curl("-u", b.admin(), "-X", "MKCOL", b.url("Phone"))
	for _, p := range []string{"Phone/" + long, "Phone/notes.txt", "Phone/notes.txt", "Phone/gone.txt"} {
		if code, _ := b.curl("-u", b.admin(), "-T", f, b.url(p)); code != 201 && code != 204 {
			t.Fatalf("PUT %s = %d", p, code)
		}
	}
	b.curl("-u", b.admin(), "-X", "DELETE", b.url("Phone/gone.txt"))
	link := func(q string) string {
		t.Helper()
		code, body := b.curl("-u", b.admin(), "-H", "OCS-APIREQUEST: true", "--data", q, b.ocs("/apps/files_sharing/api/v1/shares"))
		m := regexp.MustCompile(`/s/([A-Za-z0-9]+)`).FindStringSubmatch(body)
		if code != 200 || m == nil {
			t.Fatalf("link %s = %d %s", q, code, body)
		}
		return "/s/" + m[1]
	}
	folderLink := link("path=/Phone&shareType=3&permissions=1&password=phone-party-1")
	fileLink := link("path=/Phone/notes.txt&shareType=3&permissions=1")
	add := exec.Command(built(t), "user", "-state", b.state, "add", "phoebe")
	add.Stdin = strings.NewReader("phoebe-secret-1\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("user add: %v %s", err, out)
	}
	b.curl("-u", "phoebe:phoebe-secret-1", "-T", f, b.url("left.txt"))
	if out, err := exec.Command(built(t), "user", "del", "phoebe", "-state", b.state).CombinedOutput(); err != nil {
		t.Fatalf("user del: %v %s", err, out)
	}
	_, body := b.curl("-X", "POST", "https://localhost:"+b.port(b.https)+"/index.php/login/v2")
	flow := regexp.MustCompile(`/index.php/login/v2/flow/[A-Za-z0-9_-]+`).FindString(body)
	if flow == "" {
		t.Fatalf("login/v2: %s", body)
	}

	pages := []phonePage{
		{route: "GET /login", name: "login", path: "/login", wait: "#username", as: "stranger"},
		{name: "welcome", path: "http://" + b.http + "/", wait: "#fingerprint", as: "stranger", fingerprints: map[string]int{"#fingerprint": 2}},
		{route: "GET /s/{token}", name: "link-password", path: folderLink, wait: "#link-password", as: "stranger"},
		{name: "link-folder", path: folderLink, wait: "#download-all", as: "guest"},
		{name: "link-file", path: fileLink, wait: "#download", as: "guest"},
		{route: "GET /files/{path...}", name: "files", path: "/files/Phone/", wait: "#new-folder"},
		{name: "preview", path: "/files/Phone/notes.txt?view", wait: "pre.preview"},
		{route: "GET /photos", name: "photos", path: "/photos", wait: "h1"},
		{route: "GET /search", name: "search", path: "/search?q=named", wait: "#q2"},
		{route: "GET /trash/{$}", name: "trash", path: "/trash/", wait: "#empty-trash"},
		{name: "versions", path: "/trash/?path=/Phone/notes.txt", wait: "h1"},
		{route: "GET /shares", name: "shares", path: "/shares", wait: "#shared-files"},
		{name: "share-form", path: "/shares?path=/Phone", wait: "#share"},
		{route: "GET /connect", name: "connect", path: "/connect", wait: "#make-rclone", fingerprints: map[string]int{"#sshfs + dd > code": 1}},
		{route: "GET /account", name: "account", path: "/account", wait: "#app-label"},
		{name: "two-factor", path: "/account", click: "#totp-new", wait: "#totp-code"},
		{route: "GET /admin/{$}", name: "admin", path: "/admin/", wait: "#new-user"},
		{route: "GET /index.php/login/v2/flow/{id}", name: "login-flow", path: flow, wait: "#grant"},
		{route: "GET /index.php/login/flow", name: "login-flow-v1", path: "/index.php/login/flow", wait: "#grant"},
		{route: "GET /trust", name: "trust", path: "/trust", wait: "#fingerprint", fingerprints: map[string]int{"#fingerprint": 2}},
		{route: "GET /{$}", name: "status", path: "/", wait: "#ca-fingerprint", fingerprints: map[string]int{"#ca-fingerprint": 2, "#host-key": 1}},
	}
	checkRoutes(t, pages)

	// The admin's browser, logged in through the form; a guest's, which
	// gave the folder's link its password; a stranger's, which gave
	// nothing (contexts of their own: no session).
	guest, cancelG := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancelG()
	stranger, cancelS := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	defer cancelS()
	browsers := map[string]context.Context{"": ctx, "guest": guest, "stranger": stranger}
	run := func(ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			loc, _ := chromedp.Run(ctx, chromedp.Location())
			t.Fatalf("%s (at %s): %v", what, loc, err)
		}
	}
	eval := func(ctx context.Context, what, js string) any {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	run(ctx, "log in", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.SendKeys(chromedp.ID("username"), "admin"),
		chromedp.SendKeys(chromedp.ID("password"), b.password),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("new-folder")))
	run(guest, "unlock the folder's link", chromedp.Navigate(base+folderLink), chromedp.WaitVisible(chromedp.ID("link-password")),
		chromedp.SendKeys(chromedp.ID("link-password"), "phone-party-1"),
		chromedp.Click(chromedp.ID("unlock")), chromedp.WaitVisible(chromedp.ID("download-all")))
	// Each page is loaded at the screen's size, as a phone loads it, and
	// left in out/screenshots/ for review.
	shots := filepath.Join("..", "out", "screenshots")
	os.MkdirAll(shots, 0o755)
	for _, size := range [][2]int64{{390, 844}, {1280, 800}} {
		width, phone := size[0], size[0] < 500
		var opts []chromedp.EmulateViewportOption
		if phone {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		for _, c := range browsers {
			run(c, "size the screen", chromedp.EmulateViewport(width, size[1], opts...))
		}
		var widths []string
		for _, p := range pages {
			c, url := browsers[p.as], p.path
			if !strings.Contains(url, "://") {
				url = base + url
			}
			run(c, "open "+p.name, chromedp.Navigate(url))
			if p.click != "" {
				run(c, "press "+p.click+" on "+p.name, chromedp.Click(chromedp.CSS(p.click)))
			}
			run(c, "show "+p.name, chromedp.WaitVisible(chromedp.CSS(p.wait)))
			if p.name == "shares" { // the QR codes shown, as wide as they get
				eval(c, "open the QR codes", `document.querySelectorAll('details.qr-box').forEach(d => d.open = true), 0`)
			}
			if png, err := chromedp.Run(c, chromedp.FullScreenshot(100)); err == nil {
				os.WriteFile(filepath.Join(shots, fmt.Sprintf("phones-%s-%d.png", p.name, width)), png, 0o644)
			}
			w, _ := eval(c, "width of "+p.name, `[document.documentElement.scrollWidth, document.querySelector('header.top')?.getBoundingClientRect().height || 0]`).([]any)
			widths = append(widths, fmt.Sprintf("%s %.0f (menu %.1f)", p.name, w[0], w[1]))
			if why, _ := eval(c, "width of "+p.name, fmt.Sprintf(overflowJS, width)).(string); why != "" {
				t.Errorf("the %s page at %d px: %s", p.name, width, why)
			}
			if !phone {
				continue
			}
			if got, _ := eval(c, "the menu of "+p.name, phoneMenuJS).(string); got != "" {
				t.Errorf("the %s page at %d px: %s", p.name, width, got)
			}
			for sel, least := range p.fingerprints {
				got, _ := eval(c, "the fingerprint on "+p.name, fmt.Sprintf(fingerprintWrapJS, sel)).(map[string]any)
				if lines, _ := got["lines"].(float64); got["bad"] != "" || int(lines) < least {
					t.Errorf("the %s page at %d px: the fingerprint in %s takes %v lines (want at least %d), %v", p.name, width, sel, lines, least, got["bad"])
				}
			}
		}
		t.Logf("at %d px the pages are (name, width and the menu's height in px): %s", width, strings.Join(widths, ", "))
	}
	adminLabels(t, ctx, base)
	copyLink(t, ctx, base)
}

// adminLabels: on a phone the admin's user rows stack, each cell after its
// label; on a laptop the table's head names the columns and the cells
// carry no label.
func adminLabels(t *testing.T, ctx context.Context, base string) {
	for _, width := range []int64{390, 1280} {
		var opts []chromedp.EmulateViewportOption
		if width < 500 {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 800, opts...), chromedp.Navigate(base+"/admin/"), chromedp.WaitVisible(chromedp.ID("new-user"))); err != nil {
			t.Fatalf("the admin page at %d px: %v", width, err)
		}
		cells, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('tr[data-user] td[data-label]')].map(td => td.dataset.label + '|' + getComputedStyle(td, '::before').content)`))
		if err != nil || len(cells) == 0 {
			t.Fatalf("the admin's user rows at %d px have no labelled cells: %v", width, err)
		}
		for _, c := range cells {
			label, shown, _ := strings.Cut(c, "|")
			if want := `"` + label + `: "`; width < 500 && shown != want || width >= 500 && shown != "none" {
				t.Errorf("at %d px the admin's user rows show the label %q as %s", width, label, shown)
			}
		}
	}
}

// copyLink: on the sharing page a link's button copies the link; where the
// browser refuses the clipboard, it selects the link instead.
func copyLink(t *testing.T, ctx context.Context, base string) {
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{Origin: base,
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted}); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}
	button := chromedp.CSS(`tr button[data-copy]`)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/shares"), chromedp.WaitVisible(button)); err != nil {
		t.Fatal(err)
	}
	link, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById(document.querySelector('tr button[data-copy]').dataset.copy).textContent`))
	if err != nil || !strings.Contains(link, "/s/") {
		t.Fatalf("the first link on the sharing page: %q %v", link, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(button), chromedp.WaitVisible(chromedp.CSS("#result.flash"))); err != nil {
		t.Fatalf("copy the link: %v", err)
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise)); err != nil || got != link {
		t.Errorf("the clipboard holds %q (%v), want the link %q", got, err, link)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`navigator.clipboard.writeText = () => Promise.reject(new Error('refused')), 0`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(button), chromedp.WaitVisible(chromedp.CSS("#result.problem"))); err != nil {
		t.Fatalf("copy the link with the clipboard refused: %v", err)
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getSelection().toString()`)); err != nil || got != link {
		t.Errorf("with the clipboard refused the selection is %q (%v), want the link %q", got, err, link)
	}
}

// phonePage is a page of the web UI as testPhones loads it.
type phonePage struct {
	route string // the route that serves it, as server/testdata/routes.txt names it; "" for another view of one
	name  string
	path  string // on the box's HTTPS; a full URL for another listener
	click string // a button to press once there, for a page a form shows (the two-factor enrolment)
	wait  string // a selector on the page once it is shown
	as    string // whose browser: "" the admin's, "guest" (gave the folder's link its password), "stranger"
	// fingerprints are the fingerprints on the page, by selector, with
	// the fewest lines each takes on a phone.
	fingerprints map[string]int
}

// notPages are the GET routes open to a browser that serve no page of
// their own, and why.
var notPages = map[string]string{
	"GET /ui/{name}":                    "the pages' style, script and icon",
	"GET /thumb/{path...}":              "a picture",
	"GET /trash/item/{id}":              "a download",
	"GET /admin/bench.json":             "JSON",
	"GET /report.json":                  "JSON",
	"GET /ca.crt":                       "a download",
	"GET /ca.der":                       "a download",
	"GET /bonesync.mobileconfig":        "a download",
	"GET /files":                        "a redirect to /files/",
	"GET /index.php/f/{id}":             "a redirect to the file's folder",
	"GET /s/{token}/download":           "a download",
	"GET /s/{token}/preview":            "a picture",
	"GET /index.php/s/{token}":          "the page of /s/{token}, at Nextcloud's path",
	"GET /index.php/s/{token}/download": "a download",
	"GET /index.php/s/{token}/preview":  "a picture",
}

// browserAccess are the kinds of access (front's, as routes.txt names
// them) under which a route may serve a browser a page; the rest are the
// apps' and the protocols'.
var browserAccess = map[string]bool{"public": true, "optional": true, "page": true, "account": true, "admin": true, "link": true}

// checkRoutes fails the test for a GET route open to a browser that is
// neither among pages nor in notPages, and for a route either names that
// the server does not register.
func checkRoutes(t *testing.T, pages []phonePage) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("server", "testdata", "routes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[1] == "GET" && browserAccess[f[0]] {
			registered[f[1]+" "+f[2]] = true
		}
	}
	loaded := map[string]bool{}
	for _, p := range pages {
		if p.route != "" {
			loaded[p.route] = true
			if !registered[p.route] {
				t.Errorf("the page %s names the route %q, which the server does not register", p.name, p.route)
			}
		}
	}
	for r := range notPages {
		if !registered[r] {
			t.Errorf("notPages names the route %q, which the server does not register", r)
		}
	}
	for r := range registered {
		if !loaded[r] && notPages[r] == "" {
			t.Errorf("%s serves a browser, and the phone test does not load it: add its page to testPhones, or the route to notPages with why", r)
		}
	}
}

// overflowJS finds what makes the page wider than a screen %d CSS pixels
// wide: "" if nothing does, else the page's width and the widest element
// reaching past the screen's edge that no scrolling or clipping box holds,
// as tag#id.class, its width and the start of its HTML. A phone's browser
// zooms out to show a page wider than it, and window.innerWidth grows with
// the page: the screen's own width is the measure.
const overflowJS = `(() => {
	const screen = Math.min(%d, window.innerWidth);
	if (document.documentElement.scrollWidth <= screen) return '';
	// held: a box between e and the page scrolls or clips it. An element
	// positioned absolutely is held only by a box that contains it (one
	// positioned or transformed), fixed by none.
	const held = e => {
		let pos = getComputedStyle(e).position;
		for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
			if (pos === 'fixed') return false;
			const st = getComputedStyle(a);
			if (pos === 'absolute' && st.position === 'static' && st.transform === 'none') continue;
			if (st.overflowX !== 'visible') return true;
			pos = st.position;
		}
		return false;
	};
	let widest = null, w = 0;
	for (const e of document.body.querySelectorAll('*')) {
		const r = e.getBoundingClientRect();
		if (r.width === 0 || r.right + scrollX <= screen + 0.5 || held(e)) continue;
		if (!widest || r.width > w) { widest = e; w = r.width; }
	}
	const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + [...e.classList].map(c => '.' + c).join('');
	const r = widest && widest.getBoundingClientRect();
	return 'the page is ' + document.documentElement.scrollWidth + ' px wide on a ' + screen + ' px screen' +
		(widest ? '; the widest element past its edge: ' + name(widest) + ', ' + Math.round(w) + ' px wide, from ' +
			Math.round(r.left + scrollX) + ' to ' + Math.round(r.right + scrollX) + ' px: ' + widest.outerHTML.slice(0, 160) : '');
})()`

// phoneMenuJS checks the menu on a phone: "" if it is at most 52 px tall
// and shows the page's own entry, else what is wrong.
const phoneMenuJS = `(() => {
	const top = document.querySelector('header.top');
	if (!top) return '';
	const h = top.getBoundingClientRect().height;
	if (h > 52) return 'the menu is ' + Math.round(h) + ' px tall, more than 52';
	const nav = top.querySelector('nav'), cur = nav && nav.querySelector('[aria-current]');
	if (!cur) return '';
	const n = nav.getBoundingClientRect(), r = cur.getBoundingClientRect();
	if (r.left < n.left - 1 || r.right > n.right + 1) return 'the menu hides the page\'s own entry, ' + cur.textContent;
	return '';
})()`

// fingerprintWrapJS measures the fingerprint (span.fp) in the element %q
// as shown: the lines it takes, and "bad", a piece of it that wraps inside
// rather than at a <wbr> between pieces.
const fingerprintWrapJS = `((sel) => {
	const fp = document.querySelector(sel + ' .fp');
	if (!fp) return {lines: 0, bad: 'no fingerprint in ' + sel};
	let lines = 0, last = null, bad = '';
	for (const n of fp.childNodes) {
		if (n.nodeType !== 3) continue; // a <wbr>
		for (let i = 0; i < n.length; i++) {
			const r = document.createRange();
			r.setStart(n, i);
			r.setEnd(n, i + 1);
			const top = r.getBoundingClientRect().top;
			if (last === null || top > last + 2) {
				lines++;
				if (i > 0 && !bad) bad = 'a wrap inside "' + n.textContent + '"';
			}
			last = top;
		}
	}
	return {lines, bad};
})(%q)`

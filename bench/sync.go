package main

// The sync figures: what an unchanged Nextcloud desktop sync of 10,000
// files costs bonesync, PROPFIND Depth 1 on a folder of 10,000 files beside
// Apache's mod_dav on a copy of the same tree, bonesync's memory during a
// PROPFIND Depth infinity over 20,000 files, and upload CPU per MiB with
// the digests computed as the bytes stream against a build without them.
// The Depth 1 PROPFIND is also asked with the Nextcloud Android app's
// properties (shares, previews, favourites, folder sizes), and both are
// asked of a baseline build, the release before those properties
// (-baseline), on the same folder: what the new properties cost.

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bonesync/bonesync/appliance/measure"
	"github.com/bonesync/bonesync/appliance/store"
)

const (
	syncUser, syncPass = "bench", "bench-password"
	ncUser             = "bench-nc" // the tree nextcloudcmd syncs, alone in its account
	flatFiles          = 10000      // one folder, for PROPFIND Depth 1
	treeDirs, treeEach = 100, 100
	infDirs, infEach   = 20, 1000 // PROPFIND Depth infinity
	uploadMiB          = 64
	uploadRuns         = 9
)

// syncResult is the sync comparison.
type syncResult struct {
	NCRequests []string      // an unchanged nextcloudcmd sync of 10,000 files
	NCCPU      time.Duration // bonesync's CPU for it
	NCWall     time.Duration
	// PROPFIND Depth 1 of 10,000 files: median wall time and server CPU.
	PropBonesync, PropApache propFigures
	ApacheVersion            string
	// The same folder with the Android app's listing, and both requests
	// asked of the baseline build (-baseline) on the same folder.
	PropApps           propFigures
	Baseline           string // its revision
	BaseSync, BaseApps propFigures
	BaselineErr        string
	// PROPFIND Depth infinity over 20,000 files.
	InfRSSBeforeKB, InfHWMKB int64
	InfBytes                 int64
	InfWall                  time.Duration
	// Upload server CPU per MiB, digests on and off.
	UploadHashed, UploadPlain time.Duration
	// A sync-collection poll of a calendar of pollEvents events.
	PollNothing, PollOne propFigures
	Err                  string
}

type propFigures struct {
	Wall, CPU time.Duration
	Bytes     int
}

func syncBlock(ctx context.Context, o *options, dir string) syncResult {
	var res syncResult
	if err := syncRun(ctx, o, dir, &res); err != nil {
		res.Err = err.Error()
	}
	return res
}

func syncRun(ctx context.Context, o *options, dir string, res *syncResult) error {
	st := filepath.Join(dir, "state")
	for _, u := range []string{syncUser, ncUser} {
		add := exec.CommandContext(ctx, o.bonesync, "user", "-state", st, "add", u)
		add.Stdin = strings.NewReader(syncPass + "\n")
		if out, err := add.CombinedOutput(); err != nil {
			return fmt.Errorf("user add: %v %s", err, out)
		}
	}
	o.logf("sync: writing %d + %d + %d files through the store", flatFiles, treeDirs*treeEach, infDirs*infEach)
	if err := populate(filepath.Join(st, "files")); err != nil {
		return err
	}
	o.logf("sync: writing %d events through the calendar store", pollEvents)
	if err := populateCalendar(filepath.Join(st, "files")); err != nil {
		return err
	}
	bs, _, err := startBonesync(ctx, o.bonesync, dir)
	if err != nil {
		return err
	}
	defer bs.stop()
	base := "https://" + bs.addr
	client := davClient()

	// nextcloudcmd: a first sync downloads the tree, the second finds
	// nothing changed.
	if _, err := exec.LookPath("nextcloudcmd"); err == nil {
		local := filepath.Join(o.work, "nc-local")
		os.MkdirAll(local, 0o755)
		if err := ncSync(ctx, local, base, filepath.Join(o.work, "nc-1.log")); err != nil {
			return err
		}
		settle(bs)
		cpu0, _ := treeCPU(bs.pid())
		t0 := time.Now()
		if err := ncSync(ctx, local, base, filepath.Join(o.work, "nc-2.log")); err != nil {
			return err
		}
		res.NCWall = time.Since(t0)
		settle(bs)
		cpu1, _ := treeCPU(bs.pid())
		res.NCCPU = cpu1 - cpu0
		log, _ := os.ReadFile(filepath.Join(o.work, "nc-2.log"))
		res.NCRequests = ncRequestLines(string(log))
		o.logf("sync: unchanged nextcloudcmd sync: %d requests, %.0f ms server CPU", len(res.NCRequests), ms(res.NCCPU))
	} else {
		o.logf("sync: nextcloudcmd is not installed; skipping its figure")
	}

	// PROPFIND Depth 1, bonesync then Apache on a copy of the same folder.
	flatURL := base + "/dav/flat/"
	if res.PropBonesync, err = propfindFigures(ctx, bs, client, flatURL, "1", propfindProps); err != nil {
		return err
	}
	o.logf("sync: PROPFIND Depth 1 of %d files: bonesync %.0f ms, CPU %.0f ms", flatFiles, ms(res.PropBonesync.Wall), ms(res.PropBonesync.CPU))
	if res.PropApps, err = propfindFigures(ctx, bs, client, flatURL, "1", androidProps); err != nil {
		return err
	}
	o.logf("sync: PROPFIND Depth 1 of %d files, the Android app's properties: bonesync %.0f ms, CPU %.0f ms", flatFiles, ms(res.PropApps.Wall), ms(res.PropApps.CPU))
	if err := apacheRun(ctx, o, st, client, res); err != nil {
		o.logf("sync: Apache: %v", err)
		res.Err = "apache: " + err.Error()
	}

	// Depth infinity: the server's peak resident memory during it.
	pid := strconv.Itoa(bs.pid())
	os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0) // reset VmHWM
	res.InfRSSBeforeKB, _ = statusKB("/proc/"+pid+"/status", "VmRSS")
	t0 := time.Now()
	n, err := propfind(client, base+"/dav/inf/", "infinity", propfindProps)
	if err != nil {
		return err
	}
	res.InfWall, res.InfBytes = time.Since(t0), n
	res.InfHWMKB, _ = statusKB("/proc/"+pid+"/status", "VmHWM")
	o.logf("sync: PROPFIND Depth infinity over %d files: RSS %d kB before, peak %d kB", infDirs*infEach, res.InfRSSBeforeKB, res.InfHWMKB)

	if err := calendarPolls(ctx, o, bs, client, base, res); err != nil {
		return fmt.Errorf("calendar polls: %w", err)
	}

	// Upload CPU per MiB with digests, then with the build without them.
	if res.UploadHashed, err = uploadCPU(ctx, bs, client, base, "hashed"); err != nil {
		return err
	}
	bs.stop()
	if o.baseline != "" {
		res.Baseline = o.baseline
		if err := baselineRun(ctx, o, dir, client, res); err != nil {
			o.logf("sync: baseline %s: %v", o.baseline, err)
			res.BaselineErr = err.Error()
		}
	}
	plain := filepath.Join(o.work, "bonesync-nohash")
	overlay, err := nohashOverlay(o.work, "")
	if err != nil {
		return err
	}
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-overlay="+overlay, "-o", plain, "./appliance")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build without digests: %v %s", err, out)
	}
	bs2, _, err := startBonesync(ctx, plain, dir)
	if err != nil {
		return err
	}
	defer bs2.stop()
	if res.UploadPlain, err = uploadCPU(ctx, bs2, client, "https://"+bs2.addr, "plain"); err != nil {
		return err
	}
	o.logf("sync: upload CPU per MiB: %.2f ms with digests, %.2f ms without", ms(res.UploadHashed), ms(res.UploadPlain))
	return nil
}

// populate writes the trees through the store, as uploads would (digests,
// ids, folder tags), before the server starts: flat and inf for syncUser,
// tree for ncUser.
func populate(files string) error {
	s, err := store.Open(files)
	if err != nil {
		return err
	}
	defer s.Close()
	t, err := s.Tree(syncUser)
	if err != nil {
		return err
	}
	defer t.Close()
	nc, err := s.Tree(ncUser)
	if err != nil {
		return err
	}
	defer nc.Close()
	type file struct {
		t    *store.Tree
		name string
	}
	var names []file
	for _, d := range []string{"flat", "inf"} {
		if err := t.Mkdir(d); err != nil {
			return err
		}
	}
	for i := 0; i < flatFiles; i++ {
		names = append(names, file{t, fmt.Sprintf("flat/f%05d.txt", i)})
	}
	for d := 0; d < treeDirs; d++ {
		nc.Mkdir(fmt.Sprintf("d%03d", d))
		for i := 0; i < treeEach; i++ {
			names = append(names, file{nc, fmt.Sprintf("d%03d/f%03d.txt", d, i)})
		}
	}
	for d := 0; d < infDirs; d++ {
		t.Mkdir(fmt.Sprintf("inf/d%02d", d))
		for i := 0; i < infEach; i++ {
			names = append(names, file{t, fmt.Sprintf("inf/d%02d/f%04d.txt", d, i)})
		}
	}
	// Several at once, as a sync client uploads: each upload waits for its
	// fsyncs, not for the CPU.
	work := make(chan file)
	errs := make(chan error, 8)
	for w := 0; w < cap(errs); w++ {
		go func() {
			var first error
			for f := range work {
				if first != nil {
					continue
				}
				u, err := f.t.Create(f.name, false)
				if err == nil {
					fmt.Fprintf(u, "bonesync bench file %s\n", f.name)
					err = u.Close()
				}
				first = err
			}
			errs <- first
		}()
	}
	for _, p := range names {
		work <- p
	}
	close(work)
	var first error
	for w := 0; w < cap(errs); w++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ncSync runs nextcloudcmd on ncUser's account (the tree), its log in
// logFile. (Its --unsyncedfolders makes version 3.7.3 stall for minutes,
// hence an account of its own.)
func ncSync(ctx context.Context, local, server, logFile string) error {
	cmd := exec.CommandContext(ctx, "nextcloudcmd", "--trust", "--non-interactive",
		"-u", ncUser, "-p", syncPass, local, server)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(logFile))
	out, err := cmd.CombinedOutput()
	os.WriteFile(logFile, out, 0o644)
	if err != nil {
		return fmt.Errorf("nextcloudcmd: %v (log in %s)", err, logFile)
	}
	return nil
}

// ncRequestLines are the requests nextcloudcmd logged.
func ncRequestLines(log string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`accessmanager \]:\s+\d "([A-Z]*)" "([^"]*)"`).FindAllStringSubmatch(log, -1) {
		method := m[1]
		if method == "" {
			method = "GET"
		}
		out = append(out, method+" "+m[2])
	}
	return out
}

// davClient speaks HTTP/1.1 over TLS to both servers (Apache here has no
// HTTP/2), without checking the throwaway certificate.
func davClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{},
	}, Timeout: 5 * time.Minute}
}

const propfindProps = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop>` +
	`<d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getetag/></d:prop></d:propfind>`

// androidProps is the Nextcloud Android app's folder listing
// (WebdavUtils.getAllPropSet in nextcloud/android 35), as
// appliance/apps_e2e_test.go replays it.
const androidProps = `<?xml version="1.0" encoding="UTF-8"?><D:propfind xmlns:D="DAV:"><D:prop>
<D:displayname/><D:getcontenttype/><D:resourcetype/><D:getcontentlength/><D:getlastmodified/><D:creationdate/><D:getetag/>
<oc:permissions xmlns:oc="http://owncloud.org/ns"/><oc:fileid xmlns:oc="http://owncloud.org/ns"/><oc:id xmlns:oc="http://owncloud.org/ns"/>
<oc:size xmlns:oc="http://owncloud.org/ns"/><oc:favorite xmlns:oc="http://owncloud.org/ns"/><oc:owner-id xmlns:oc="http://owncloud.org/ns"/>
<oc:owner-display-name xmlns:oc="http://owncloud.org/ns"/><oc:comments-unread xmlns:oc="http://owncloud.org/ns"/>
<nc:is-encrypted xmlns:nc="http://nextcloud.org/ns"/><nc:mount-type xmlns:nc="http://nextcloud.org/ns"/><nc:has-preview xmlns:nc="http://nextcloud.org/ns"/>
<nc:note xmlns:nc="http://nextcloud.org/ns"/><nc:sharees xmlns:nc="http://nextcloud.org/ns"/><nc:lock xmlns:nc="http://nextcloud.org/ns"/>
<nc:metadata-photos-size xmlns:nc="http://nextcloud.org/ns"/><nc:hidden xmlns:nc="http://nextcloud.org/ns"/>
</D:prop></D:propfind>`

// propfind asks for the properties in body and reads the whole answer.
func propfind(c *http.Client, url, depth, body string) (int64, error) {
	req, _ := http.NewRequest("PROPFIND", url, strings.NewReader(body))
	req.SetBasicAuth(syncUser, syncPass)
	req.Header.Set("Depth", depth)
	req.Header.Set("Content-Type", "application/xml")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 207 {
		return n, fmt.Errorf("PROPFIND %s = %s", url, resp.Status)
	}
	return n, err
}

// propfindFigures is the median wall time and CPU of five PROPFINDs, after
// one unmeasured.
func propfindFigures(ctx context.Context, s *server, c *http.Client, url, depth, body string) (propFigures, error) {
	var f propFigures
	if _, err := propfind(c, url, depth, body); err != nil {
		return f, err
	}
	var walls, cpus []time.Duration
	for i := 0; i < 5 && ctx.Err() == nil; i++ {
		cpu0, _ := treeCPU(s.pid())
		t0 := time.Now()
		n, err := propfind(c, url, depth, body)
		if err != nil {
			return f, err
		}
		walls = append(walls, time.Since(t0))
		settle(s)
		cpu1, _ := treeCPU(s.pid())
		cpus = append(cpus, cpu1-cpu0)
		f.Bytes = int(n)
	}
	f.Wall, f.CPU = measure.Percentile(walls, 50), measure.Percentile(cpus, 50)
	return f, ctx.Err()
}

// cleanPageCache writes the dirty pages out and drops the clean ones from
// the page cache (as root; else it only writes), so that each measured
// upload finds free memory: otherwise the later runs, and the second
// build measured, pay in system time for reclaiming what the earlier ones
// wrote (seen: the build without digests, measured second, at 2.3-3.3
// times the CPU per MiB it takes with clean memory).
func cleanPageCache() {
	unix.Sync()
	os.WriteFile("/proc/sys/vm/drop_caches", []byte("1"), 0)
}

// uploadCPU is the server's CPU per MiB over uploadRuns PUTs of uploadMiB.
func uploadCPU(ctx context.Context, s *server, c *http.Client, base, label string) (time.Duration, error) {
	body := make([]byte, uploadMiB<<20)
	for i := range body {
		body[i] = byte(i * 7)
	}
	put := func(i int) error {
		req, _ := http.NewRequestWithContext(ctx, "PUT", fmt.Sprintf("%s/dav/upload-%s-%d.bin", base, label, i), bytes.NewReader(body))
		req.SetBasicAuth(syncUser, syncPass)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("PUT = %s", resp.Status)
		}
		return nil
	}
	if err := put(-1); err != nil { // warm-up
		return 0, err
	}
	var per []time.Duration
	for i := 0; i < uploadRuns; i++ {
		cleanPageCache()
		settle(s)
		cpu0, err := processCPU(s.pid())
		if err != nil {
			return 0, err
		}
		if err := put(i); err != nil {
			return 0, err
		}
		settle(s)
		cpu1, err := processCPU(s.pid())
		if err != nil {
			return 0, err
		}
		per = append(per, (cpu1-cpu0)/uploadMiB)
	}
	return measure.Percentile(per, 50), nil
}

// baselineRun builds the -baseline revision of bonesync from git, starts it
// on the same state directory and asks it the same two PROPFINDs.
func baselineRun(ctx context.Context, o *options, dir string, c *http.Client, res *syncResult) error {
	src := filepath.Join(o.work, "baseline-src")
	bin := filepath.Join(o.work, "bonesync-baseline")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	o.logf("sync: building the baseline %s", o.baseline)
	archive := exec.CommandContext(ctx, "sh", "-c", `git archive --format=tar "$1" | tar -x -C "$2"`, "sh", o.baseline, src)
	if out, err := archive.CombinedOutput(); err != nil {
		return fmt.Errorf("git archive %s: %v %s", o.baseline, err, out)
	}
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./appliance")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v %s", o.baseline, err, out)
	}
	s, err := startBonesyncOn(ctx, bin, dir)
	if err != nil {
		return err
	}
	defer s.stop()
	url := "https://" + s.addr + "/dav/flat/"
	if res.BaseSync, err = propfindFigures(ctx, s, c, url, "1", propfindProps); err != nil {
		return err
	}
	if res.BaseApps, err = propfindFigures(ctx, s, c, url, "1", androidProps); err != nil {
		return err
	}
	o.logf("sync: baseline %s PROPFIND Depth 1: %.0f ms, CPU %.0f ms; the app's properties %.0f ms, CPU %.0f ms", o.baseline,
		ms(res.BaseSync.Wall), ms(res.BaseSync.CPU), ms(res.BaseApps.Wall), ms(res.BaseApps.CPU))
	return nil
}

// apacheConf serves a copy of the flat folder with mod_dav over TLS, Basic
// authentication from a file (SHA-1 entries: cheap, like bonesync's cache
// of verified passwords).
const apacheConf = `ServerRoot %[1]s
Listen 127.0.0.1:%[2]d
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule authz_user_module /usr/lib/apache2/modules/mod_authz_user.so
LoadModule authn_core_module /usr/lib/apache2/modules/mod_authn_core.so
LoadModule authn_file_module /usr/lib/apache2/modules/mod_authn_file.so
LoadModule auth_basic_module /usr/lib/apache2/modules/mod_auth_basic.so
LoadModule dav_module /usr/lib/apache2/modules/mod_dav.so
LoadModule dav_fs_module /usr/lib/apache2/modules/mod_dav_fs.so
LoadModule ssl_module /usr/lib/apache2/modules/mod_ssl.so
User nobody
Group nogroup
PidFile %[1]s/apache.pid
ErrorLog %[1]s/error.log
Mutex file:%[1]s default
DavLockDB %[1]s/davlock
ServerName localhost
SSLEngine on
SSLCertificateFile %[3]s
SSLCertificateKeyFile %[4]s
SSLProtocol TLSv1.2 TLSv1.3
DocumentRoot %[1]s/www
<Directory %[1]s/www>
    Dav On
    AuthType Basic
    AuthName bench
    AuthUserFile %[1]s/htpasswd
    Require valid-user
</Directory>
`

func apacheRun(ctx context.Context, o *options, st string, c *http.Client, res *syncResult) error {
	if _, err := os.Stat("/usr/sbin/apache2"); err != nil {
		return fmt.Errorf("apache2 is not installed (bench/deps.sh installs it)")
	}
	dir := filepath.Join(o.work, "apache")
	www := filepath.Join(dir, "www")
	os.MkdirAll(www, 0o755)
	if out, err := exec.Command("cp", "-r", filepath.Join(st, "files", syncUser, "flat"), www).CombinedOutput(); err != nil {
		return fmt.Errorf("copy the tree: %v %s", err, out)
	}
	exec.Command("chown", "-R", "nobody:nogroup", dir).Run()
	sum := sha1.Sum([]byte(syncPass))
	os.WriteFile(filepath.Join(dir, "htpasswd"), []byte(syncUser+":{SHA}"+base64.StdEncoding.EncodeToString(sum[:])+"\n"), 0o644)
	port, err := freePort()
	if err != nil {
		return err
	}
	conf := filepath.Join(dir, "apache2.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(apacheConf, dir, port, filepath.Join(st, "tls.crt"), filepath.Join(st, "tls.key"))), 0o644)
	s := &server{name: "apache", addr: fmt.Sprintf("127.0.0.1:%d", port), logs: []string{filepath.Join(dir, "error.log")}}
	s.cmd = exec.Command("/usr/sbin/apache2", "-f", conf, "-DFOREGROUND")
	if err := start(ctx, s, func() error { return dialable(s.addr) }); err != nil {
		return err
	}
	defer s.stop()
	res.ApacheVersion = firstMatch(output("/usr/sbin/apache2", "-v"), `Apache/[0-9.]+`)
	res.PropApache, err = propfindFigures(ctx, s, c, "https://"+s.addr+"/flat/", "1", propfindProps)
	if err == nil {
		o.logf("sync: PROPFIND Depth 1 of %d files: Apache %.0f ms, CPU %.0f ms", flatFiles, ms(res.PropApache.Wall), ms(res.PropApache.CPU))
	}
	return err
}

// markdown writes the sync section of the report.
func (s *syncResult) markdown(w io.Writer) {
	fmt.Fprintf(w, "\n## Sync\n\n")
	if s.Err != "" {
		fmt.Fprintf(w, "Failed: %s\n\n", s.Err)
	}
	fmt.Fprintf(w, "| figure | bonesync | peer | ratio |\n|---|---:|---:|---:|\n")
	if s.NCRequests != nil {
		fmt.Fprintf(w, "| unchanged nextcloudcmd sync of %d files: requests | %d | | |\n", treeDirs*treeEach, len(s.NCRequests))
		fmt.Fprintf(w, "| ... its server CPU, wall time | %.0f ms, %.2f s | | |\n", ms(s.NCCPU), s.NCWall.Seconds())
	}
	fmt.Fprintf(w, "| PROPFIND Depth 1, %d files: time (median of 5) | %.0f ms | %.0f ms (%s mod_dav) | %s |\n",
		flatFiles, ms(s.PropBonesync.Wall), ms(s.PropApache.Wall), s.ApacheVersion, ratio(ms(s.PropBonesync.Wall), ms(s.PropApache.Wall)))
	fmt.Fprintf(w, "| ... server CPU | %.0f ms | %.0f ms | %s |\n", ms(s.PropBonesync.CPU), ms(s.PropApache.CPU), ratio(ms(s.PropBonesync.CPU), ms(s.PropApache.CPU)))
	fmt.Fprintf(w, "| ... answer size | %d kB | %d kB | |\n", s.PropBonesync.Bytes/1000, s.PropApache.Bytes/1000)
	if s.BaseSync.Wall > 0 {
		fmt.Fprintf(w, "| ... the same, beside the baseline %s: time, server CPU | %.0f ms, %.0f ms | %.0f ms, %.0f ms | %s, %s |\n", s.Baseline,
			ms(s.PropBonesync.Wall), ms(s.PropBonesync.CPU), ms(s.BaseSync.Wall), ms(s.BaseSync.CPU),
			ratio(ms(s.PropBonesync.Wall), ms(s.BaseSync.Wall)), ratio(ms(s.PropBonesync.CPU), ms(s.BaseSync.CPU)))
	}
	fmt.Fprintf(w, "| PROPFIND Depth 1, %d files, the Android app's %d properties: time, server CPU, answer size (target within 1.2× of the baseline) | %.0f ms, %.0f ms, %d kB |",
		flatFiles, strings.Count(androidProps, "/>"), ms(s.PropApps.Wall), ms(s.PropApps.CPU), s.PropApps.Bytes/1000)
	if s.BaseApps.Wall > 0 {
		fmt.Fprintf(w, " %.0f ms, %.0f ms, %d kB (baseline %s) | **%s, %s** |\n", ms(s.BaseApps.Wall), ms(s.BaseApps.CPU), s.BaseApps.Bytes/1000, s.Baseline,
			ratio(ms(s.PropApps.Wall), ms(s.BaseApps.Wall)), ratio(ms(s.PropApps.CPU), ms(s.BaseApps.CPU)))
	} else {
		fmt.Fprintf(w, " | |\n")
	}
	fmt.Fprintf(w, "| PROPFIND Depth infinity, %d files: RSS growth (target < 10 MB) | %.1f MB (%.1f s, %d kB sent) | | |\n",
		infDirs*infEach, float64(s.InfHWMKB-s.InfRSSBeforeKB)/1024, s.InfWall.Seconds(), s.InfBytes/1000)
	fmt.Fprintf(w, "| upload server CPU per MiB, digests on / off (target <= 1.15x) | %.2f / %.2f ms | | %s |\n",
		ms(s.UploadHashed), ms(s.UploadPlain), ratio(ms(s.UploadHashed), ms(s.UploadPlain)))
	fmt.Fprintf(w, "| calendar of %d events, sync-collection poll, nothing new: time, server CPU (medians, per poll) | %.2f ms, %.2f ms | | |\n", pollEvents, ms(s.PollNothing.Wall), ms(s.PollNothing.CPU))
	fmt.Fprintf(w, "| ... one event changed | %.2f ms, %.2f ms | | |\n", ms(s.PollOne.Wall), ms(s.PollOne.CPU))
	if s.NCRequests != nil {
		fmt.Fprintf(w, "\nThe unchanged sync's requests: %s.\n", strings.Join(s.NCRequests, ", "))
	}
	if s.Baseline != "" {
		fmt.Fprintf(w, "\nThe baseline is bonesync at %s (`-baseline`), built from git by this run and started on the same state directory "+
			"after bonesync; it answers the properties it does not know with 404 in the same answer.", s.Baseline)
		if s.BaselineErr != "" {
			fmt.Fprintf(w, " **It failed: %s.**", s.BaselineErr)
		}
		fmt.Fprintln(w)
	}
}

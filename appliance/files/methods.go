package files

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/filetype"
	"github.com/bonesync/bonesync/appliance/refusal"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/store"
)

// get answers GET and HEAD: a file's bytes (ranges and conditions as
// net/http's ServeContent does them) with the headers sync clients read;
// a folder is shown by the web pages.
func (q *request) get() {
	f, err := q.tree.Open(q.name)
	if err != nil {
		writeStoreError(q.w, err)
		return
	}
	defer f.Close()
	in, err := q.tree.Describe(f) // the very file whose bytes are sent
	if err != nil {
		writeStoreError(q.w, err)
		return
	}
	if in.IsDir() {
		page := ""
		if q.h.FolderPage != nil && !q.link { // the user's page, not the link's
			page = q.h.FolderPage(strings.TrimSuffix(path.Clean("/"+q.name), "/") + "/")
		}
		switch {
		case q.prefix != Prefix:
			// The apps' roots answer a folder's HEAD or GET as Nextcloud
			// does: 200, it exists (the Android app checks its root so).
			q.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			msg := "a folder: list it with PROPFIND"
			if page != "" {
				msg += ", or see it at " + page
			}
			io.WriteString(q.w, msg+"\n")
		case page == "":
			http.Error(q.w, "a folder: list it with PROPFIND", http.StatusMethodNotAllowed)
		default:
			http.Redirect(q.w, q.r, page, http.StatusSeeOther)
		}
		return
	}
	h := q.w.Header()
	// A file is served as data, never as a page of the box's: an uploaded
	// .html or .svg runs no script with the user's session.
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'")
	fileHeaders(h, in)
	h.Set("ETag", quote(in.ETag))
	h.Set("Content-Type", filetype.Of(q.name)) // as listings say it
	http.ServeContent(q.w, q.r, q.name, in.ModTime(), f)
}

// put answers PUT: the body becomes the file, committed only if it arrived
// whole (and matches its checksum); until then the previous version stays.
func (q *request) put() {
	r, w := q.r, q.w
	if r.Header.Get("Content-Range") != "" {
		// RFC 9110 section 14.5: a partial PUT must not be taken as a whole one.
		http.Error(w, "Content-Range on PUT is not supported: send the whole file", http.StatusBadRequest)
		return
	}
	up, err := newPutInfo(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !q.parentExists() {
		return
	}
	old, statErr := q.tree.Stat(q.name)
	if statErr == nil && old.IsDir() {
		http.Error(w, "a folder is there", http.StatusMethodNotAllowed)
		return
	}
	if r.ContentLength > 0 {
		grow := r.ContentLength
		if statErr == nil {
			grow -= old.Size()
		}
		if err := q.tree.Fits(grow); err != nil {
			writeStoreError(w, err) // before a byte is sent (Expect: 100-continue)
			return
		}
	}
	u, err := q.tree.Create(q.name, false)
	if err != nil {
		writeStoreError(w, err)
		return
	}
	u.SetModTime(up.mtime)
	for _, c := range up.sums {
		u.Expect(c)
	}
	_, err = io.Copy(u, up.body)
	if err == nil || up.body.err != nil {
		// A body cut short is the client's, whatever the copy made of it.
		if cerr := up.body.complete(); cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		u.Fail(err)
	}
	if err := u.Close(); err != nil {
		q.refused("PUT", err)
		return
	}
	written(w, u.Result(), up, statErr == nil)
}

// written answers an upload committed as in: with the headers sync clients
// read (ETag, file id, digests, whether the date was kept), 204 if it
// replaced a file, 201 if it is new.
func written(w http.ResponseWriter, in store.Info, up *putInfo, replaced bool) {
	fileHeaders(w.Header(), in)
	w.Header().Set("ETag", quote(in.ETag))
	if !up.mtime.IsZero() {
		w.Header().Set("X-OC-MTime", "accepted")
	}
	if replaced {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
}

// delete answers DELETE: a file, or a folder and all it holds.
func (q *request) delete() {
	if _, err := q.tree.Stat(q.name); err != nil {
		writeStoreError(q.w, err)
		return
	}
	if err := q.tree.RemoveAll(q.name); err != nil {
		q.refused("DELETE", err)
		return
	}
	q.w.WriteHeader(http.StatusNoContent)
}

// mkcol answers MKCOL: a new folder, in a folder that exists.
func (q *request) mkcol() {
	if q.r.ContentLength > 0 {
		http.Error(q.w, "MKCOL takes no body", http.StatusUnsupportedMediaType)
		return
	}
	if !q.parentExists() {
		return
	}
	if err := q.tree.Mkdir(q.name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			http.Error(q.w, "it exists", http.StatusMethodNotAllowed)
			return
		}
		q.refused("MKCOL", err)
		return
	}
	if in, err := q.tree.Info(q.name); err == nil {
		targetHeaders(q.w.Header(), in)
	}
	q.w.WriteHeader(http.StatusCreated)
}

// parentExists answers 409 Conflict, and returns false, unless the
// request's path is in a folder that exists (RFC 4918 sections 9.3.1, 9.7.1).
func (q *request) parentExists() bool {
	fi, err := q.tree.Stat(path.Dir(path.Clean("/" + q.name)))
	if errors.Is(err, fs.ErrPermission) {
		return true // a drop, which reads nothing: the change finds whether it is there
	}
	if err != nil || !fi.IsDir() {
		http.Error(q.w, "the folder it would be in does not exist", http.StatusConflict)
		return false
	}
	return true
}

// refused answers a change the store refused, and logs why when it is not
// one a client is told about (a quota, a full disk, a name...).
func (q *request) refused(method string, err error) {
	if code, _ := storeStatus(err); code == http.StatusForbidden && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, errIncomplete) {
		q.h.Log.Error("change refused", "method", method, "user", q.user, "path", q.name, "err", err)
	}
	writeStoreError(q.w, err)
}

func quote(etag string) string { return `"` + etag + `"` }

// targetHeaders tell a client that made or moved something its new id and ETag.
func targetHeaders(h http.Header, in store.Info) {
	h.Set("OC-FileId", ocIDOf(in.FileID))
	h.Set("OC-ETag", quote(in.ETag))
	h.Set("ETag", quote(in.ETag))
}

// fileHeaders adds what sync clients read from a GET, HEAD or PUT: the
// ETag under ownCloud's name, the file id, and the digests.
func fileHeaders(h http.Header, in store.Info) {
	h.Set("OC-ETag", quote(in.ETag))
	h.Set("OC-FileId", ocIDOf(in.FileID))
	if in.Sums != nil {
		h.Set("OC-Checksum", "SHA1:"+hex.EncodeToString(in.Sums.SHA1[:]))
		digest := "SHA=" + base64.StdEncoding.EncodeToString(in.Sums.SHA1[:])
		if in.Sums.HasMD5 {
			digest += ",MD5=" + base64.StdEncoding.EncodeToString(in.Sums.MD5[:])
		}
		h.Set("Digest", digest)
	}
}

// putBody watches a PUT's body on its way to the upload: the upload is
// committed only if the whole body arrived.
type putBody struct {
	io.ReadCloser
	want, got int64
	err       error // a read error other than EOF
}

func (b *putBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.got += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

// errIncomplete is a body that did not arrive whole.
var errIncomplete = errors.New("upload incomplete")

// complete reports whether the body arrived whole, or why not.
func (b *putBody) complete() error {
	switch {
	case b.err != nil:
		return fmt.Errorf("%w: interrupted after %d bytes: %w", errIncomplete, b.got, b.err)
	case b.want >= 0 && b.got != b.want:
		return fmt.Errorf("%w: %d of %d bytes", errIncomplete, b.got, b.want)
	}
	return nil
}

// putInfo is what a PUT brings besides its body.
type putInfo struct {
	body  *putBody
	mtime time.Time // X-OC-Mtime
	sums  []store.Checksum
}

// newPutInfo reads a PUT's X-OC-Mtime, OC-Checksum and Content-MD5.
func newPutInfo(r *http.Request) (*putInfo, error) {
	up := &putInfo{body: &putBody{ReadCloser: r.Body, want: r.ContentLength}}
	if v := r.Header.Get("X-OC-Mtime"); v != "" {
		t, err := parseUnixTime(v)
		if err != nil {
			return nil, fmt.Errorf("X-OC-Mtime: %w", err)
		}
		up.mtime = t
	}
	if v := r.Header.Get("OC-Checksum"); v != "" {
		c, err := parseOCChecksum(v)
		if err != nil {
			return nil, err
		}
		up.sums = append(up.sums, c)
	}
	if v := r.Header.Get("Content-MD5"); v != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		if err != nil || len(b) != 16 {
			return nil, fmt.Errorf("Content-MD5 %q is not a base64 MD5 digest", v)
		}
		up.sums = append(up.sums, store.Checksum{Algo: "MD5", Sum: b})
	}
	return up, nil
}

// parseUnixTime reads seconds since 1970, as X-OC-Mtime and the ownCloud
// clients' lastmodified carry them (maybe with a fraction).
func parseUnixTime(v string) (time.Time, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || f > 1<<40 {
		return time.Time{}, fmt.Errorf("%q is not a time in seconds since 1970", v)
	}
	sec := int64(f)
	t := time.Unix(sec, int64((f-float64(sec))*1e9))
	return t, state.Storable("time", t)
}

// parseOCChecksum reads an OC-Checksum header: "SHA1:hex", "MD5:hex" or
// "Adler32:hex", as the ownCloud and Nextcloud clients send them.
func parseOCChecksum(v string) (store.Checksum, error) {
	algo, sum, ok := strings.Cut(strings.TrimSpace(v), ":")
	algo = strings.ToUpper(algo)
	b, err := hex.DecodeString(sum)
	want := map[string]int{"SHA1": 20, "MD5": 16, "ADLER32": 4}[algo]
	if !ok || err != nil || want == 0 || len(b) != want {
		return store.Checksum{}, fmt.Errorf("OC-Checksum %q: want SHA1:, MD5: or ADLER32: and a hex digest", v)
	}
	return store.Checksum{Algo: algo, Sum: b}, nil
}

// storeStatus is the HTTP status and the words a change the store refused
// is answered with (package refusal), and 400 for a body that did not
// arrive whole.
func storeStatus(err error) (int, string) {
	if errors.Is(err, errIncomplete) {
		return http.StatusBadRequest, err.Error()
	}
	return refusal.Status(err)
}

// writeStoreError answers a request whose change the store refused (see
// storeStatus).
func writeStoreError(w http.ResponseWriter, err error) {
	code, msg := storeStatus(err)
	http.Error(w, msg, code)
}

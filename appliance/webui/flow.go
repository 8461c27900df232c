package webui

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
)

// The Nextcloud login flow v2 (Nextcloud's developer manual, "Login flow
// v2"): an app POSTs /index.php/login/v2 and gets a URL to open in a
// browser and a token to poll with. The owner logs in there and grants
// access; the box makes an app password for the app, and the app's next
// poll collects it, once. The app never sees the account's password.
const (
	flowFor   = 20 * time.Minute // as Nextcloud's
	maxFlows  = 64               // pending at once
	flowStart = "/index.php/login/v2"
)

type flow struct {
	poll    [32]byte // SHA-256 of the poll token
	client  string   // the app, as its User-Agent names it
	created time.Time
	user    string // set once granted, with
	pass    string // the app password, until collected
}

type loginFlows struct {
	mu sync.Mutex
	m  map[string]*flow // by the login page's token
}

// sweep drops flows past their time; the caller holds the lock.
func (f *loginFlows) sweep(now time.Time) {
	for k, v := range f.m {
		if now.Sub(v.created) > flowFor {
			delete(f.m, k)
		}
	}
}

// dropOldestWaiting makes room for a new flow: starting one needs no
// login, so a stranger's flood must not lock the owner's apps out. The
// oldest flow nobody has granted yet goes; it reports false if every
// flow is granted (and waits for its app to collect it).
func (f *loginFlows) dropOldestWaiting() bool {
	var oldest string
	for k, v := range f.m {
		if v.user == "" && (oldest == "" || v.created.Before(f.m[oldest].created)) {
			oldest = k
		}
	}
	if oldest == "" {
		return false
	}
	delete(f.m, oldest)
	return true
}

func (u *UI) flowRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+flowStart, u.flowStart)
	mux.HandleFunc("POST "+flowStart+"/poll", u.flowPoll)
	mux.HandleFunc("GET "+flowStart+"/flow/{id}", u.flowPage)
	mux.HandleFunc("POST "+flowStart+"/flow/{id}", u.flowGrant)
	u.flowV1Routes(mux)
}

// flowStart begins a flow: anyone may, as with Nextcloud; nothing is
// granted until the owner logs in and says so.
func (u *UI) flowStart(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		http.Error(w, "over HTTPS only", http.StatusForbidden)
		return
	}
	id, poll := auth.RandomToken(), auth.RandomToken()
	client := clientOf(r)
	now := time.Now()
	u.flows.mu.Lock()
	if u.flows.m == nil {
		u.flows.m = map[string]*flow{}
	}
	u.flows.sweep(now)
	if len(u.flows.m) >= maxFlows && !u.flows.dropOldestWaiting() {
		u.flows.mu.Unlock()
		w.Header().Set("Retry-After", "60")
		http.Error(w, "too many logins waiting; try again in a minute", http.StatusServiceUnavailable)
		return
	}
	u.flows.m[id] = &flow{poll: sha256.Sum256([]byte(poll)), client: client, created: now}
	u.flows.mu.Unlock()
	base := "https://" + r.Host
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{
		"poll":  map[string]string{"token": poll, "endpoint": base + flowStart + "/poll"},
		"login": base + flowStart + "/flow/" + id,
	})
}

// flowPoll answers 404 until the flow is granted, then the credentials,
// once.
func (u *UI) flowPoll(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	tok := r.PostFormValue("token")
	if r.TLS == nil || tok == "" {
		http.NotFound(w, r)
		return
	}
	key := sha256.Sum256([]byte(tok))
	u.flows.mu.Lock()
	u.flows.sweep(time.Now())
	var found *flow
	for id, f := range u.flows.m {
		if f.poll == key && f.pass != "" {
			found = f
			delete(u.flows.m, id)
			break
		}
	}
	u.flows.mu.Unlock()
	if found == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]string{"server": "https://" + r.Host, "loginName": found.user, "appPassword": found.pass})
}

type flowData struct {
	Client string
	Done   bool
}

// pending is the flow the login link names; if it has gone, the owner is
// told so and ok is false.
func (u *UI) pending(w http.ResponseWriter, r *http.Request, sess *auth.Session) (*flow, page, bool) {
	u.flows.mu.Lock()
	u.flows.sweep(time.Now())
	f, ok := u.flows.m[r.PathValue("id")]
	u.flows.mu.Unlock()
	p := u.base(sess, "Connect an app", "")
	if !ok {
		p.Problem = "This login link has expired or was used. Start again from the app."
		u.render(w, http.StatusNotFound, "message", p)
	}
	return f, p, ok
}

// flowPage asks the logged-in owner to grant the app access.
func (u *UI) flowPage(w http.ResponseWriter, r *http.Request) {
	sess, ok := u.session(w, r)
	if !ok {
		return
	}
	if f, p, ok := u.pending(w, r, sess); ok {
		p.Data = flowData{Client: f.client}
		u.render(w, http.StatusOK, "flow", p)
	}
}

func (u *UI) flowGrant(w http.ResponseWriter, r *http.Request) {
	sess, ok := u.change(w, r)
	if !ok {
		return
	}
	f, p, ok := u.pending(w, r, sess)
	if !ok {
		return
	}
	// Claimed first: a second grant (a double click, two tabs) must not
	// make a second app password that no app collects.
	u.flows.mu.Lock()
	claimed := f.user == ""
	if claimed {
		f.user = sess.User
	}
	u.flows.mu.Unlock()
	if !claimed {
		p.Problem = "This app has already been given access."
		u.render(w, http.StatusConflict, "message", p)
		return
	}
	pw, _, err := u.Users.NewAppPassword(sess.User, appLabel(f.client))
	if err != nil {
		u.flows.mu.Lock()
		f.user = ""
		u.flows.mu.Unlock()
		p.Problem = "No app password was made: " + err.Error()
		u.render(w, http.StatusInternalServerError, "message", p)
		return
	}
	u.flows.mu.Lock()
	f.user, f.pass = sess.User, pw
	u.flows.mu.Unlock()
	u.Log.Info("web: an app connected by the login flow", "user", sess.User, "app", appLabel(f.client))
	p.Data = flowData{Client: f.client, Done: true}
	u.render(w, http.StatusOK, "flow", p)
}

// appLabel names an app password after the app: Nextcloud's apps put
// their name and platform in the User-Agent, as "Mozilla/5.0 (Linux)
// mirall/3.7.3 (Nextcloud, debian-6.1 ClientArchitecture: x86_64 ...)".
func appLabel(ua string) string {
	label := ua
	if i := strings.Index(ua, "("); i >= 0 {
		if j := strings.LastIndex(ua, "("); j > i {
			if k := strings.Index(ua[j:], ","); k > 0 {
				label = strings.TrimSpace(ua[j+1:j+k]) + " app"
			}
		}
	}
	if len(label) > 60 {
		label = label[:60]
	}
	return label + " (" + time.Now().Format("2006-01-02") + ")"
}

// The login flow v1 (older Nextcloud apps): the app opens
// /index.php/login/flow in a web view of its own; the owner logs in and
// grants access, and the box answers with a redirect to
// nc://login/server:URL&user:NAME&password:APPPASSWORD, which the web
// view hands to the app.
const flowV1 = "/index.php/login/flow"

func (u *UI) flowV1Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+flowV1, u.flowV1Page)
	mux.HandleFunc("POST "+flowV1, u.flowV1Grant)
}

func (u *UI) flowV1Page(w http.ResponseWriter, r *http.Request) {
	sess, ok := u.session(w, r) // not logged in: the login page, and back
	if !ok {
		return
	}
	p := u.base(sess, "Connect an app", "")
	p.Data = flowData{Client: clientOf(r)}
	p.FormsTo = "nc:"
	u.render(w, http.StatusOK, "flow", p)
}

func (u *UI) flowV1Grant(w http.ResponseWriter, r *http.Request) {
	sess, ok := u.change(w, r)
	if !ok {
		return
	}
	client := clientOf(r)
	pw, _, err := u.Users.NewAppPassword(sess.User, appLabel(client))
	if err != nil {
		p := u.base(sess, "Connect an app", "")
		p.Problem = "No app password was made: " + err.Error()
		u.render(w, http.StatusInternalServerError, "message", p)
		return
	}
	u.Log.Info("web: an app connected by the login flow v1", "user", sess.User, "app", appLabel(client))
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", "nc://login/server:https://"+r.Host+"&user:"+url.QueryEscape(sess.User)+"&password:"+url.QueryEscape(pw))
	w.WriteHeader(http.StatusSeeOther)
}

// clientOf is the app, as its User-Agent names it.
func clientOf(r *http.Request) string {
	client := strings.TrimSpace(r.UserAgent())
	if len(client) > 200 {
		client = client[:200]
	}
	if client == "" {
		client = "an app"
	}
	return client
}

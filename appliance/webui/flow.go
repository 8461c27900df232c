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
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/guard"
)

// The Nextcloud login flow v2 (Nextcloud's developer manual, "Login flow
// v2"): an app POSTs /index.php/login/v2 and gets a URL to open in a
// browser and a token to poll with. The owner logs in there and grants
// access; the box makes an app password for the app, and the app's next
// poll collects it, once. The app never sees the account's password.
const (
	flowFor = 20 * time.Minute // as Nextcloud's
	// maxFlows bounds the flows pending at once (a few hundred bytes each):
	// more than the clients one home network holds (an IPv4 /24; an IPv6
	// /64 counts as one) times maxFlowsPerSource, so strangers on it
	// cannot fill the table with a flow each.
	maxFlows = 1024
	// maxFlowsPerSource is how many one client (an address, an IPv6 /64)
	// may have waiting: its next one replaces its own oldest.
	maxFlowsPerSource = 4
	flowStart         = "/index.php/login/v2"
)

type flow struct {
	poll    [32]byte // SHA-256 of the poll token
	client  string   // the app, from a fixed list (appKind)
	addr    string   // the address it asked from, shown on the grant page
	source  string   // what the caps count by (guard.Source)
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

// add keeps a new flow, if there is room. Starting one needs no login, so
// a stranger must not be able to evict the owner's: a client at
// maxFlowsPerSource replaces its own oldest; when all maxFlows are taken,
// the oldest waiting flow of the client guard.Crowding picks goes. It
// reports false when there is no room; the caller holds the lock.
func (f *loginFlows) add(id string, fl *flow, now time.Time) bool {
	f.sweep(now)
	waiting := map[string]int{}
	for _, v := range f.m {
		if v.user == "" {
			waiting[v.source]++
		}
	}
	switch {
	case waiting[fl.source] >= maxFlowsPerSource:
		f.dropOldestWaiting(fl.source)
	case len(f.m) >= maxFlows:
		heavy, ok := guard.Crowding(waiting, func(n int) int { return n }, waiting[fl.source], false)
		if !ok || !f.dropOldestWaiting(heavy) {
			return false
		}
	}
	f.m[id] = fl
	return true
}

// dropOldestWaiting drops source's oldest flow nobody has granted yet; it
// reports false if it has none.
func (f *loginFlows) dropOldestWaiting(source string) bool {
	var oldest string
	for k, v := range f.m {
		if v.user == "" && v.source == source && (oldest == "" || v.created.Before(f.m[oldest].created)) {
			oldest = k
		}
	}
	if oldest == "" {
		return false
	}
	delete(f.m, oldest)
	return true
}

func (u *Login) flowRoutes(rs *front.Routes) {
	rs.Public("POST "+flowStart, u.flowStart)
	rs.Public("POST "+flowStart+"/poll", u.flowPoll)
	rs.Handle(auth.Page, "GET "+flowStart+"/flow/{id}", u.flowPage)
	rs.Handle(auth.Account, "POST "+flowStart+"/flow/{id}", u.flowGrant)
	u.flowV1Routes(rs)
}

// flowStart begins a flow: anyone may, as with Nextcloud; nothing is
// granted until the owner logs in and says so.
func (u *Login) flowStart(w http.ResponseWriter, r *http.Request) {
	id, poll := auth.RandomToken(), auth.RandomToken()
	addr := guard.Host(r.RemoteAddr)
	fl := &flow{poll: sha256.Sum256([]byte(poll)), client: appKind(r.UserAgent()), addr: addr, source: guard.Source(addr), created: time.Now()}
	u.flows.mu.Lock()
	if u.flows.m == nil {
		u.flows.m = map[string]*flow{}
	}
	added := u.flows.add(id, fl, fl.created)
	u.flows.mu.Unlock()
	if !added {
		w.Header().Set("Retry-After", "60")
		http.Error(w, "too many logins waiting; try again in a minute", http.StatusServiceUnavailable)
		return
	}
	base := "https://" + r.Host
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{ // dropped: strings always encode; a client gone polls again
		"poll":  map[string]string{"token": poll, "endpoint": base + flowStart + "/poll"},
		"login": base + flowStart + "/flow/" + id,
	})
}

// flowPoll answers 404 until the flow is granted, then the credentials,
// once.
func (u *Login) flowPoll(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	tok := r.PostFormValue("token")
	if tok == "" {
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
	// dropped: strings always encode
	json.NewEncoder(w).Encode(map[string]string{"server": "https://" + r.Host, "loginName": found.user, "appPassword": found.pass})
}

type flowData struct {
	Client string // from a fixed list, never the app's own words
	From   string // the address the app asked from
	Done   bool
}

// pending is the flow the login link names; if it has gone, the owner is
// told so and ok is false.
func (u *Login) pending(w http.ResponseWriter, r *http.Request, sess auth.Caller) (*flow, page, bool) {
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
func (u *Login) flowPage(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	if f, p, ok := u.pending(w, r, sess); ok {
		p.Data = flowData{Client: f.client, From: f.addr}
		u.render(w, http.StatusOK, "flow", p)
	}
}

func (u *Login) flowGrant(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
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
	pw, _, err := u.Apps.NewAppPassword(sess.User, appLabel(f.client))
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
	p.Data = flowData{Client: f.client, From: f.addr, Done: true}
	u.render(w, http.StatusOK, "flow", p)
}

// appLabel names an app password after the app, and the day.
func appLabel(kind string) string {
	return kind + " (" + time.Now().Format("2006-01-02") + ")"
}

// appKinds are the apps the grant page names, by what their User-Agent
// carries. Anything else is "An app": the page never shows a requester's
// own words, which anyone may choose ("Your bank's security check").
var appKinds = []struct{ token, name string }{
	{"Nextcloud-android", "The Nextcloud Android app"},
	{"Nextcloud-iOS", "The Nextcloud iOS app"},
	{"mirall", "The Nextcloud desktop app"},
	{"Nextcloud-Talk", "Nextcloud Talk"},
	{"ownCloud", "An ownCloud app"},
}

// appKind is what the grant page calls the app asking.
func appKind(ua string) string {
	for _, k := range appKinds {
		if strings.Contains(ua, k.token) {
			return k.name
		}
	}
	return "An app"
}

// The login flow v1 (older Nextcloud apps): the app opens
// /index.php/login/flow in a web view of its own; the owner logs in and
// grants access, and the box answers with a redirect to
// nc://login/server:URL&user:NAME&password:APPPASSWORD, which the web
// view hands to the app.
const flowV1 = "/index.php/login/flow"

func (u *Login) flowV1Routes(rs *front.Routes) {
	rs.Handle(auth.Page, "GET "+flowV1, u.flowV1Page)
	rs.Handle(auth.Account, "POST "+flowV1, u.flowV1Grant)
}

func (u *Login) flowV1Page(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	p := u.base(sess, "Connect an app", "")
	p.Data = flowData{Client: appKind(r.UserAgent()), From: guard.Host(r.RemoteAddr)}
	p.FormsTo = "nc:"
	u.render(w, http.StatusOK, "flow", p)
}

func (u *Login) flowV1Grant(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	client := appKind(r.UserAgent())
	pw, _, err := u.Apps.NewAppPassword(sess.User, appLabel(client))
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

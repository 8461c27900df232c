package webui

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
)

// The connect page: for the logged-in user, how each client reaches the
// box, with the exact address, user name and, where a client needs an app
// password, a button that makes one and puts it into the steps. The
// addresses are the ones the browser used (its host and port) and the
// SFTP port the server listens on; a test runs the commands as printed.

// connectData is what the connect page shows.
type connectData struct {
	User     string
	UserPath string // the user name as a URL's path segment
	Host     string // as the browser reached the box, IPv6 bracketed
	HTTPS    string // https://HOST[:PORT]
	DAVS     string // HOST[:PORT] for davs:// and webdavs://
	Server   string // HOST[:PORT], for calendar apps
	SFTPPort int
	SFTP     string // sftp://USER@HOST[:PORT]
	SSHFS    string // the -p flag, "" for 22
	HostKey  string // the SFTP host key's SHA256 fingerprint
	// Password is an app password just made, filled into the steps
	// (shown this once); For is the client it was made for.
	Password, For string
	CSRF          string
}

// PW is the app password in the steps of client: the one just made for
// it, or a placeholder.
func (d connectData) PW(client string) string {
	if d.For == client && d.Password != "" {
		return d.Password
	}
	return "APP-PASSWORD"
}

// Make is the button that makes an app password for client.
func (d connectData) Make(client string) template.HTML {
	return template.HTML(`<form method="post" action="/connect" class="inline"><input type="hidden" name="csrf" value="` +
		template.HTMLEscapeString(d.CSRF) + `"><input type="hidden" name="client" value="` + template.HTMLEscapeString(client) +
		`"><button type="submit" id="make-` + template.HTMLEscapeString(client) + `">Make an app password for it</button></form>`)
}

// connectClients are the clients the page can make an app password for,
// by the name its button sends, with the label the password gets.
var connectClients = map[string]string{
	"files":   "file manager",
	"windows": "Windows Explorer",
	"mac":     "Mac Finder",
	"davx5":   "DAVx5",
	"apple":   "iPhone or Mac calendars",
	"thunder": "Thunderbird",
	"rclone":  "rclone",
	"sftp":    "SFTP client",
	"desktop": "Nextcloud desktop",
}

func (u *Account) connectPage(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	u.showConnect(w, r, sess, http.StatusOK, "", "", "")
}

func (u *Account) connectPost(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	client := r.PostFormValue("client")
	label, known := connectClients[client]
	if !known {
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	}
	pw, _, err := u.Users.NewAppPassword(sess.User, label)
	if err != nil {
		u.showConnect(w, r, sess, http.StatusBadRequest, "", "No app password made: "+err.Error(), "")
		return
	}
	u.showConnect(w, r, sess, http.StatusOK, pw, "", client)
}

func (u *Account) showConnect(w http.ResponseWriter, r *http.Request, sess auth.Caller, code int, password, problem, client string) {
	p := u.base(sess, "Connect a device", "connect")
	p.Problem = problem
	host, _, ok := front.RequestHost(r)
	if !ok {
		host = "bonesync.local"
	}
	hp := front.HTTPSHost(r)
	d := connectData{User: sess.User, Host: host, HTTPS: "https://" + hp, DAVS: hp, Server: hp,
		SFTPPort: u.SFTPPort, Password: password, For: client, CSRF: sess.CSRF(), UserPath: url.PathEscape(sess.User)}
	if u.Report != nil {
		d.HostKey = u.Report().HostKeyFingerprint
	}
	if d.SFTPPort == 0 {
		d.SFTPPort = 22
	}
	d.SFTP = "sftp://" + url.PathEscape(sess.User) + "@" + host
	if d.SFTPPort != 22 {
		d.SFTP += ":" + strconv.Itoa(d.SFTPPort)
		d.SSHFS = "-p " + strconv.Itoa(d.SFTPPort) + " "
	}
	p.Data = d
	w.Header().Set("Cache-Control", "no-store") // an app password may be on it
	u.render(w, code, "connect", p)
}

// shellQuote is s as one word for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

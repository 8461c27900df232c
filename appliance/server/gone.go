package server

import (
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/front"
	"github.com/bonesync/bonesync/appliance/guard"
	"github.com/bonesync/bonesync/appliance/provision"
	"github.com/bonesync/bonesync/appliance/users"
)

// openWithoutFiles builds the services a server needs while the files
// are away (the data disk is unplugged, Options.FilesGone says why): the
// accounts and the login door, for the CA downloads, the redirects and
// SFTP's answer; nothing that reads or writes the files. parts then runs
// what of the one list does not need them: every other HTTPS request
// gets 503 with the reason (a page for a browser, a line for a client),
// an SFTP login gets the reason on stderr, nothing is written anywhere,
// and the card's copy of the files, if any is left, is never served in
// their place. PID 1 starts the full server again when the disk is back.
func openWithoutFiles(o Options, p provision.Options, box *provision.Box, log *slog.Logger) (*services, error) {
	s := &services{o: o, log: log, prov: p, cfg: p.Config, box: newCurrent(box, p.URLs),
		handshakes: guard.NewLimiter(2*runtime.NumCPU(), 10*time.Second)}
	var err error
	if s.accounts, err = users.Open(p.State); err != nil {
		return nil, err
	}
	s.door = auth.New(s.accounts, log)
	return s, nil
}

// filesAway answers every path the CA downloads do not with 503 and why.
type filesAway struct{ why string }

func (a filesAway) Routes(rs *front.Routes) { rs.Public("/", a.ServeHTTP) }

func (a filesAway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "60")
	w.Header().Set("Cache-Control", "no-store")
	msg := "The files are not available: " + a.why + ". Nothing is lost; they are served again as soon as the disk is back."
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><meta name=viewport content=\"width=device-width\"><title>bonesync: files not available</title>"+
			"<meta http-equiv=refresh content=30><h1>Files not available</h1><p>%s</p>", html.EscapeString(msg))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintln(w, msg)
}

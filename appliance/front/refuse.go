package front

import (
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/bonesync/bonesync/appliance/auth"
)

// refuse writes the door's refusal of a caller the route is not for
// (auth.Refusal): 403 with its reason, as a page that links back to the
// web pages' home for a browser on a page's route (a logged-in user who
// opens the admin's page), in plain text for any other client (WebDAV, the
// sync clients, the pages' scripts), which reads the status. Any other
// error the door answered itself.
func refuse(w http.ResponseWriter, r *http.Request, err error) {
	var no *auth.Refusal
	if !errors.As(err, &no) {
		return
	}
	if no.Confirm {
		w.Header().Set("X-Bonesync-Confirm", "password")
	}
	if !no.Page || !strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Error(w, no.Reason, http.StatusForbidden)
		return
	}
	back := no.Back
	if back == "" {
		back = "/"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	refusalPage.Execute(w, struct{ Reason, Back string }{no.Reason, back})
}

var refusalPage = template.Must(template.New("refused").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not for this account</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style>
</head><body>
<h1>Not for this account</h1>
<p>{{.Reason}}</p>
<p><a href="{{.Back}}">Back to your files</a></p>
</body></html>
`))

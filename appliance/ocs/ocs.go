// Package ocs writes the answers of Nextcloud's OCS API (/ocs/v1.php and
// /ocs/v2.php): the capabilities, the user, notifications, shares. Every
// answer is an envelope, {"ocs": {"meta": ..., "data": ...}}, in JSON when
// the client asks for it (format=json, or Accept: application/json, as the
// iOS app sends) and in XML otherwise, as the Android app's share calls
// read it. v1 says success with status code 100 and always answers HTTP
// 200; v2 says 200 and mirrors an error in the HTTP status.
package ocs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// V2 reports whether r is an OCS v2 call.
func V2(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/ocs/v2.php") }

// wantsJSON reports whether the client asked for JSON.
func wantsJSON(r *http.Request) bool {
	switch r.URL.Query().Get("format") {
	case "json":
		return true
	case "xml":
		return false
	}
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// Write answers r with data, successfully. A GET's answer carries an ETag,
// and a client that sends it back (If-None-Match) gets 304.
func Write(w http.ResponseWriter, r *http.Request, data any) {
	code := 100
	if V2(r) {
		code = 200
	}
	write(w, r, http.StatusOK, code, "OK", data)
}

// Error answers r with an OCS failure: status is the HTTP status (a v2
// answer carries it; a v1 answer is 200 with it in the envelope, as
// Nextcloud's own v1 does for 997 and the rest).
func Error(w http.ResponseWriter, r *http.Request, status int, message string) {
	ocsCode := status
	switch status {
	case http.StatusUnauthorized:
		ocsCode = 997
	case http.StatusNotFound:
		ocsCode = 404
	case http.StatusBadRequest:
		ocsCode = 400
	}
	httpStatus := status
	if !V2(r) {
		httpStatus = http.StatusOK
		if status == http.StatusUnauthorized {
			httpStatus = status
		}
	}
	write(w, r, httpStatus, ocsCode, message, []any{})
}

func write(w http.ResponseWriter, r *http.Request, httpStatus, code int, message string, data any) {
	status := "ok"
	if httpStatus >= 400 || code >= 300 && code != 100 {
		status = "failure"
	}
	var body []byte
	if wantsJSON(r) {
		var err error
		body, err = json.Marshal(map[string]any{"ocs": map[string]any{
			"meta": map[string]any{"status": status, "statuscode": code, "message": message},
			"data": data,
		}})
		if err != nil { // a value JSON cannot hold: no half an answer
			httpStatus = http.StatusInternalServerError
			body = []byte(`{"ocs":{"meta":{"status":"failure","statuscode":996,"message":"the answer could not be encoded"},"data":[]}}`)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	} else {
		var b bytes.Buffer
		b.WriteString(`<?xml version="1.0"?>` + "\n<ocs><meta>")
		fmt.Fprintf(&b, "<status>%s</status><statuscode>%d</statuscode><message>%s</message>", status, code, escape(message))
		b.WriteString("<totalitems></totalitems><itemsperpage></itemsperpage></meta>")
		element(&b, "data", generic(data))
		b.WriteString("</ocs>\n")
		body = b.Bytes()
		w.Header().Set("Content-Type", "text/xml; charset=UTF-8")
	}
	if r.Method == http.MethodGet && httpStatus == http.StatusOK {
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:16]) + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.WriteHeader(httpStatus)
	w.Write(body)
}

// element writes v (as JSON decodes it: maps, lists, strings, numbers,
// booleans, null) as the XML element name, as Nextcloud's OCS does: a
// list's members are <element>s, a map's keys are element names (in
// order), true is 1 and false and null are empty.
func element(b *bytes.Buffer, name string, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("<" + name + "/>")
		return
	case bool:
		if !v {
			b.WriteString("<" + name + "/>")
			return
		}
	}
	b.WriteString("<" + name + ">")
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			element(b, "element", e)
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			element(b, k, v[k])
		}
	case bool:
		b.WriteString("1")
	default:
		b.WriteString(escape(fmt.Sprint(v)))
	}
	b.WriteString("</" + name + ">")
}

// generic is data as JSON decodes it, numbers kept exact.
func generic(data any) any {
	j, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	dec.Decode(&v)
	return v
}

func escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

package server

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bonesync/bonesync/appliance/files"
	"github.com/bonesync/bonesync/appliance/listen"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/users"
)

// URLs are where the box can be reached from where a person sits, on the
// ports it really listens on: on the board by its mDNS name, which only
// the board announces, and its addresses; elsewhere (make run, a Debian
// install) by localhost and the machine's addresses.
func URLs(hostname string, onBoard bool, lns *listen.Listeners) []string {
	suffix := func(port, def int) string {
		if port == def {
			return ""
		}
		return ":" + strconv.Itoa(port)
	}
	https := suffix(listen.PortOf(lns.HTTPS), 443)
	name := "localhost"
	if onBoard {
		name = hostname + ".local"
	}
	out := []string{fmt.Sprintf("https://%s%s/", name, https)}
	for _, ip := range pki.InterfaceAddrs() {
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			continue
		}
		host := ip.String()
		if ip.To4() == nil {
			host = "[" + host + "]"
		}
		out = append(out, fmt.Sprintf("https://%s%s/", host, https))
	}
	out = append(out, fmt.Sprintf("https://%s%s%s/ (WebDAV)", name, https, files.Prefix))
	return append(out, fmt.Sprintf("sftp://%s%s/", name, suffix(listen.PortOf(lns.SSH), 22)))
}

// passwdHint is the command that changes admin's password, as the person
// reading the console types it: at the board's prompt, or in a shell with
// the state directory this server uses.
func passwdHint(o Options) string {
	if o.Board != "" {
		return "press Enter on this console, then: user passwd " + users.Admin
	}
	cmd := "bonesync user passwd " + users.Admin
	if def, _ := sysd.Dirs(); o.State != "/var/lib/bonesync" && o.State != def {
		dir := o.State
		if strings.ContainsAny(dir, " '\"$\\") {
			dir = "'" + strings.ReplaceAll(dir, "'", `'\''`) + "'"
		}
		cmd = "bonesync user -state " + dir + " passwd " + users.Admin
	} else if def != "" {
		cmd = "sudo " + cmd
	}
	return cmd
}

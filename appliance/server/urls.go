package server

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/bonesync/bonesync/appliance/files"
	"github.com/bonesync/bonesync/appliance/listen"
	"github.com/bonesync/bonesync/appliance/pki"
	"github.com/bonesync/bonesync/appliance/sysd"
	"github.com/bonesync/bonesync/appliance/users"
)

// URLs are where the box can be reached from where a person sits, on the
// ports it really listens on, each with what it is for: the welcome page
// first (the CA and how to trust it), the status page (also at each
// address), the files in the browser, WebDAV, and the SFTP command. On the
// board by its mDNS name, which only the board announces, and its
// addresses; elsewhere (make run, a Debian install) by localhost and the
// machine's addresses.
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
	var out []string
	if lns.HTTP != nil {
		out = append(out, fmt.Sprintf("http://%s%s/  (start here: the CA and how to trust it)", name, suffix(listen.PortOf(lns.HTTP), 80)))
	}
	addrs := pki.InterfaceAddrs()
	// A listener bound to one address is reached there only.
	if a, ok := lns.HTTPS.Addr().(*net.TCPAddr); ok && !a.IP.IsUnspecified() {
		addrs = []net.IP{a.IP}
		if !a.IP.IsLoopback() {
			name = ipHost(a.IP)
		}
	}
	out = append(out, fmt.Sprintf("https://%s%s/", name, https))
	for _, ip := range addrs {
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ipHost(ip) == name {
			continue
		}
		out = append(out, fmt.Sprintf("https://%s%s/", ipHost(ip), https))
	}
	out = append(out,
		fmt.Sprintf("https://%s%s/files/  (your files in the browser)", name, https),
		fmt.Sprintf("https://%s%s%s/  (WebDAV: file managers, rclone)", name, https, files.Prefix))
	sftp := "sftp "
	if p := listen.PortOf(lns.SSH); p != 22 {
		sftp += "-P " + strconv.Itoa(p) + " "
	}
	return append(out, sftp+users.Admin+"@"+name+"  (SFTP; sshfs and scp alike)")
}

// ipHost is ip as a URL's host: IPv6 in brackets.
func ipHost(ip net.IP) string {
	if ip.To4() == nil {
		return "[" + ip.String() + "]"
	}
	return ip.String()
}

// passwdHint is the command that changes admin's password, as the person
// reading the console types it: at the board's prompt, or in a shell with
// the state directory this server uses.
func passwdHint(o Options) string {
	if o.Board != "" {
		return "press Enter on this console, then: user passwd " + users.Admin
	}
	prog := o.Program
	if prog == "" {
		prog = "bonesync"
	}
	cmd := prog + " user passwd " + users.Admin
	if def, _ := sysd.Dirs(); o.State != "/var/lib/bonesync" && o.State != def {
		dir := o.State
		if strings.ContainsAny(dir, " '\"$\\") {
			dir = "'" + strings.ReplaceAll(dir, "'", `'\''`) + "'"
		}
		cmd = prog + " user -state " + dir + " passwd " + users.Admin
	} else if def != "" {
		cmd = "sudo " + cmd
	}
	return cmd
}

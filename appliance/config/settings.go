package config

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/dnsname"
	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/sftpd/policy"
)

// setting is one line a config file may hold. The table below is the single
// source of the accepted names, their defaults and the commented example file.
type setting struct {
	name string
	def  string
	help []string
	set  func(c *Config, v string) error
}

var settings = []setting{
	{
		name: "hostname", def: "bonesync",
		help: []string{
			"The box's name on the network: https://NAME.local/ reaches it.",
			"The box's certificate authority is limited to this name, NAME.local,",
			"localhost and private addresses, so change it before the first boot.",
		},
		set: func(c *Config, v string) error {
			if err := validHostname(v); err != nil {
				return err
			}
			c.Hostname = strings.ToLower(v)
			return nil
		},
	},
	{
		name: "extra_domains", def: "fritz.box",
		help: []string{
			"Domains your router puts the box's name under, comma-separated, besides .local,",
			".lan, .home.arpa, .internal, .home, .localdomain, .box and .home.lan, and the",
			"search domain the network gives at the first start (fritz.box is a FRITZ!Box's).",
			"The certificate authority is limited to them when it is made: one added later is",
			"not served until a new CA is made (the console and admin page say how).",
		},
		set: func(c *Config, v string) error {
			c.ExtraDomains = nil
			for _, d := range strings.Split(v, ",") {
				d = strings.Trim(strings.ToLower(strings.TrimSpace(d)), ".")
				if d == "" {
					continue
				}
				for _, label := range strings.Split(d, ".") {
					if !dnsname.ValidLabel(label) {
						return fmt.Errorf("%q is not a domain", d)
					}
				}
				c.ExtraDomains = append(c.ExtraDomains, d)
			}
			return nil
		},
	},
	{
		name: "tls_key", def: Auto,
		help: []string{
			"The HTTPS server key: auto (the strongest key that meets target_ms on",
			"this board, as measured on first boot) or one of",
			keys.List(pinnable(func(t keys.Type) bool { return t.TLS })) + ".",
		},
		set: keySetter(func(c *Config) *keys.Name { return &c.TLSKey }, func(t keys.Type) bool { return t.TLS }),
	},
	{
		name: "ssh_host_key", def: Auto,
		help: []string{
			"The SFTP host key: auto or one of " + keys.List(pinnable(func(t keys.Type) bool { return t.SSH })) + ".",
		},
		set: keySetter(func(c *Config) *keys.Name { return &c.SSHHostKey }, func(t keys.Type) bool { return t.SSH }),
	},
	{
		name: "target_ms", def: "500",
		help: []string{
			"Latency target in milliseconds for a new connection's handshake (p95,",
			"with `concurrency` clients connecting at once). docs/keys.md says why 500.",
		},
		set: func(c *Config, v string) error {
			n, err := parseInt(v, 1, 60000)
			if err == nil {
				c.Target = time.Duration(n) * time.Millisecond
			}
			return err
		},
	},
	{
		name: "concurrency", def: "8",
		help: []string{"How many clients connecting at once the target must hold for (1..64)."},
		set: func(c *Config, v string) error {
			n, err := parseInt(v, 1, 64)
			if err == nil {
				c.Concurrency = n
			}
			return err
		},
	},
	{
		name: "post_quantum", def: Auto,
		help: []string{
			"Offer the hybrid post-quantum key exchanges X25519MLKEM768 (HTTPS) and",
			"mlkem768x25519-sha256 (SFTP): auto (if they still meet target_ms), on, off.",
		},
		set: func(c *Config, v string) error {
			switch v = strings.ToLower(v); v {
			case Auto, "on", "off":
				c.PostQuantum = v
				return nil
			}
			return fmt.Errorf("%q is not auto, on or off", v)
		},
	},
	{
		name: "ssh_idle_timeout", def: "15m",
		help: []string{"An SFTP connection that sends nothing for this long is closed (1m..24h)."},
		set: func(c *Config, v string) error {
			d, err := parseDuration(v, time.Minute, 24*time.Hour)
			if err == nil {
				c.SSHIdleTimeout = d
			}
			return err
		},
	},
	capSetting("https_connections_per_address", "64", 1, 10000, func(c *Config) *int { return &c.HTTPSPerAddress },
		"HTTPS connections one address may hold open at once; more are closed at once.",
		"A browser opens about 6, a sync client up to 16."),
	capSetting("ssh_connections_per_address", "32", 1, 10000, func(c *Config) *int { return &c.SSHPerAddress },
		"SFTP connections one address may hold open at once (rclone opens a few per transfer)."),
	capSetting("waiting_per_address", "16", 1, 1000, func(c *Config) *int { return &c.WaitingPerAddress },
		"Connections from one address still in their TLS handshake or SSH login, on each port:",
		"idle and slow connections beyond it are closed at once, so one device cannot hold the ports."),
	capSetting("ssh_sessions_per_connection", "10", 1, 1000, func(c *Config) *int { return &c.SSHSessionsPerConn },
		"SFTP sessions (channels) open at once on one connection."),
	capSetting("ssh_sessions_per_user", "32", 1, 10000, func(c *Config) *int { return &c.SSHSessionsPerUser },
		"SFTP sessions open at once for one user, over all their connections."),
	capSetting("calendar_object_kb", "1024", 4, 65536, func(c *Config) *int { return &c.CalendarObjectKB },
		"The largest event, task or contact (in KiB) CalDAV and CardDAV store; a larger one is refused."),
	capSetting("calendar_objects", "20000", 10, 1000000, func(c *Config) *int { return &c.CalendarObjects },
		"Events, tasks or contacts one calendar or address book holds at most."),
	capSetting("calendars_per_user", "50", 1, 1000, func(c *Config) *int { return &c.CalendarsPerUser },
		"Calendars, and address books, one user may have."),
	capSetting("trash_days", "30", 0, 3650, func(c *Config) *int { return &c.TrashDays },
		"Days a deleted file, or the old content of a file that was replaced, is kept",
		"in its owner's trash, to be restored from the web page. 0: no trash, deletes are final."),
	capSetting("trash_reserve_mb", "1024", 0, 1<<20, func(c *Config) *int { return &c.TrashReserveMB },
		"Free space (MiB) the trash never holds on to: below it, the oldest trash goes first."),
	{
		name: "data_disk", def: "card",
		help: []string{
			"Where the users' files, calendars and contacts live (docs/data-disk.md): card (the SD",
			"card, or the USB disk `disk adopt` moved them to), auto (the USB disk whose ext4 label",
			"is BONESYNC), or a disk's ext4 label or UUID. A disk named here and not plugged in is",
			"waited for: the box answers 503 for files, and never serves the card's instead.",
		},
		set: func(c *Config, v string) error {
			if len(v) > 36 || strings.ContainsAny(v, " \t/") {
				return fmt.Errorf("%q is not card, auto, an ext4 label (16 bytes at most) or a UUID", v)
			}
			c.DataDisk = v
			return nil
		},
	},
	{
		name: "data_disk_format", def: "",
		help: []string{
			"The serial number of a USB disk to erase, format and move the files onto at start, as",
			"`disk adopt` does on the console (the console's `disk` lists the serials). Once it is the",
			"data disk, the setting does nothing more.",
		},
		set: func(c *Config, v string) error {
			c.DataDiskFormat = v
			return nil
		},
	},
	{
		name: "usb_device", def: "network, console, drive",
		help: []string{
			"What the board's mini-USB port offers a computer it is plugged into (docs/usb.md),",
			"comma-separated: network (the box at 192.168.7.2 for Windows, 192.168.6.2 for macOS",
			"and Linux), console (this console as a serial port), drive (a read-only drive with",
			"the start page and the CA); none turns the port off.",
		},
		set: func(c *Config, v string) error {
			var u USBFunctions
			for _, f := range strings.Split(v, ",") {
				switch f = strings.ToLower(strings.TrimSpace(f)); f {
				case "network":
					u.Network = true
				case "console":
					u.Console = true
				case "drive":
					u.Drive = true
				case "none", "":
				default:
					return fmt.Errorf("%q is not network, console, drive or none", f)
				}
			}
			c.USB = u
			return nil
		},
	},
	{
		name: "copy_target", def: "",
		help: []string{
			"Where the encrypted copy of everyone's files, calendars and contacts goes",
			"(docs/copies.md): a folder (a USB disk's), sftp://USER@HOST[:PORT]/PATH (the box's",
			"key, `bonesync copy key`, or copy_target_password), davs://USER@HOST/PATH (a",
			"second bonesync box: HOST/remote.php/dav/files/USER/PATH), or an S3-compatible",
			"store's s3://KEYID@HOST/BUCKET/PATH (the secret key in copy_target_password;",
			"?region=R if the store wants one; s3+http:// without HTTPS). Empty: no copies.",
		},
		set: func(c *Config, v string) error {
			if v != "" {
				if _, err := copies.ParseTarget(v); err != nil {
					return err
				}
			}
			c.CopyTarget = v
			return nil
		},
	},
	{
		name: "copy_target_password", def: "",
		help: []string{"The target's login password, if it takes one (an SFTP target is better given the box's key); an S3 target's secret key."},
		set: func(c *Config, v string) error {
			c.CopyTargetPassword = v
			return nil
		},
	},
	{
		name: "copy_at", def: "03:30",
		help: []string{"When the daily copy runs (HH:MM, the box's local time)."},
		set: func(c *Config, v string) error {
			t, err := time.Parse("15:04", v)
			if err != nil {
				return fmt.Errorf("%q is not HH:MM", v)
			}
			c.CopyAt = time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute
			return nil
		},
	},
	capSetting("copy_keep", "7", 0, 1000, func(c *Config) *int { return &c.CopyKeep },
		"Runs whose replaced and deleted files the copy keeps (old/ on the target)."),
	capSetting("copy_bwlimit_kib", "0", 0, 1<<20, func(c *Config) *int { return &c.CopyBwLimit },
		"Bandwidth a copy may use, in KiB/s; 0: no limit."),
	{
		name: "bench_budget", def: "90s",
		help: []string{"Time the first-boot benchmark may take in all (10s..30m)."},
		set: func(c *Config, v string) error {
			d, err := parseDuration(v, 10*time.Second, 30*time.Minute)
			if err == nil {
				c.BenchBudget = d
			}
			return err
		},
	},
}

// capSetting is a whole number between lo and hi.
func capSetting(name, def string, lo, hi int, field func(*Config) *int, help ...string) setting {
	return setting{
		name: name, def: def,
		help: append(help, fmt.Sprintf("(%d..%d)", lo, hi)),
		set: func(c *Config, v string) error {
			n, err := parseInt(v, lo, hi)
			if err == nil {
				*field(c) = n
			}
			return err
		},
	}
}

// algorithmSetting is a comma-separated SSH algorithm list, checked against
// what golang.org/x/crypto/ssh implements and considers secure.
func algorithmSetting(name, what string, field func(*Config) *[]string, supported func(ssh.Algorithms) []string) setting {
	return setting{
		name: name, def: "",
		help: []string{
			fmt.Sprintf("SFTP %s, comma-separated in order of preference; empty for the", what),
			"defaults (modern only; docs/files.md says which). Any of: " + strings.Join(modern(supported(ssh.SupportedAlgorithms())), ", "),
		},
		set: func(c *Config, v string) error {
			if strings.TrimSpace(v) == "" {
				*field(c) = nil
				return nil
			}
			var list []string
			for _, a := range strings.Split(v, ",") {
				a = strings.TrimSpace(a)
				if !slices.Contains(supported(ssh.SupportedAlgorithms()), a) {
					return fmt.Errorf("%q is not a supported %s", a, strings.TrimSuffix(what, "s"))
				}
				if why := policy.Weak(a); why != "" {
					return fmt.Errorf("%q is refused: %s", a, why)
				}
				list = append(list, a)
			}
			*field(c) = list
			return nil
		},
	}
}

// firstLoginSettings let the owner log in without the serial console.
var firstLoginSettings = []setting{
	{
		name: "admin_password", def: "",
		help: []string{
			"A password for the admin account, set here before the first boot (or later, to",
			"reset a forgotten one): the box takes it at its next start and blanks it here.",
			"An Argon2id hash in PHC form ($argon2id$v=19$m=...) is taken the same way.",
			"Quote a password that holds a #. Empty: the first start makes a password and",
			"writes it to FIRST-LOGIN.txt beside this file (and on the serial console).",
		},
		set: func(c *Config, v string) error {
			if strings.ContainsAny(v, "\x00\n") {
				return fmt.Errorf("not a password")
			}
			if strings.HasPrefix(v, "$") && !strings.HasPrefix(v, "$argon2id$") {
				return fmt.Errorf("a hash must be Argon2id ($argon2id$...)")
			}
			c.AdminPassword = v
			return nil
		},
	},
	{
		name: "admin_ssh_key", def: "",
		help: []string{"A public key for admin's SFTP logins, one line as in authorized_keys",
			"(ssh-ed25519 AAAA... you@laptop); taken at the next start."},
		set: func(c *Config, v string) error {
			if v == "" {
				c.AdminSSHKey = ""
				return nil
			}
			if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(v)); err != nil {
				return fmt.Errorf("not a public key line: %v", err)
			}
			c.AdminSSHKey = v
			return nil
		},
	},
}

func init() {
	settings = append(settings, firstLoginSettings...)
	settings = append(settings, networkSettings...)
	settings = append(settings,
		algorithmSetting("ssh_kex", "key exchanges", func(c *Config) *[]string { return &c.SSHKeyExchanges },
			func(a ssh.Algorithms) []string { return a.KeyExchanges }),
		algorithmSetting("ssh_ciphers", "ciphers", func(c *Config) *[]string { return &c.SSHCiphers },
			func(a ssh.Algorithms) []string { return a.Ciphers }),
		algorithmSetting("ssh_macs", "MACs", func(c *Config) *[]string { return &c.SSHMACs },
			func(a ssh.Algorithms) []string { return a.MACs }),
	)
}

// networkSettings are used by PID 1 on the board.
var networkSettings = []setting{
	{
		name: "address", def: "",
		help: []string{"A static address with its prefix, e.g. 192.168.1.50/24, used when no DHCP",
			"server answers. Empty: a link-local 169.254.x.y address, still reachable as NAME.local."},
		set: func(c *Config, v string) error {
			if v == "" {
				c.Address = ""
				return nil
			}
			ip, _, err := net.ParseCIDR(v)
			if err != nil || ip.To4() == nil {
				return fmt.Errorf("%q is not an IPv4 address with a prefix like 192.168.1.50/24", v)
			}
			c.Address = v
			return nil
		},
	},
	{
		name: "gateway", def: "",
		help: []string{"The router for the static address (optional)."},
		set: func(c *Config, v string) error {
			if v != "" && net.ParseIP(v) == nil {
				return fmt.Errorf("%q is not an IP address", v)
			}
			c.Gateway = v
			return nil
		},
	},
	{
		name: "dns", def: "",
		help: []string{"Name servers for the static address, comma-separated (optional)."},
		set: func(c *Config, v string) error {
			list, err := ipList(v)
			if err == nil {
				c.DNS = list
			}
			return err
		},
	},
	{
		name: "ntp", def: "pool.ntp.org",
		help: []string{"Time servers, comma-separated, tried at boot; empty to never ask. The box",
			"has no battery-backed clock: without NTP it keeps the last time it knew."},
		set: func(c *Config, v string) error {
			c.NTP = nil
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					c.NTP = append(c.NTP, s)
				}
			}
			return nil
		},
	},
}

func ipList(v string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if net.ParseIP(s) == nil {
			return nil, fmt.Errorf("%q is not an IP address", s)
		}
		out = append(out, s)
	}
	return out, nil
}

func lookup(name string) *setting {
	for i := range settings {
		if settings[i].name == name {
			return &settings[i]
		}
	}
	return nil
}

// pinnable are the key types a setting may pin: usable for its protocol and
// strong enough.
func pinnable(usable func(keys.Type) bool) []keys.Name {
	return keys.Select(func(t keys.Type) bool { return usable(t) && !t.Reference() })
}

func keySetter(field func(*Config) *keys.Name, usable func(keys.Type) bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.ToLower(v)
		if v == Auto {
			*field(c) = Auto
			return nil
		}
		info, ok := keys.Lookup(keys.Name(v))
		if !ok || !usable(info) {
			return fmt.Errorf("%q is not a key type for this setting", v)
		}
		if info.Strength < keys.MinStrength {
			return fmt.Errorf("%s gives %d-bit security, below the %d-bit minimum", v, info.Strength, keys.MinStrength)
		}
		*field(c) = info.Name
		return nil
	}
}

// validHostname accepts one DNS label.
func validHostname(v string) error {
	if !dnsname.ValidLabel(v) {
		return fmt.Errorf("%q is not a host name (1 to 63 letters, digits and inner hyphens)", v)
	}
	return nil
}

// Example returns a config file in which every setting is present, commented
// out, at its default, with its explanation.
func Example() string {
	var b strings.Builder
	b.WriteString("# bonesync configuration. Remove the '#' before a setting to change it.\n")
	b.WriteString("# A mistake here is reported on the console with its line number and the\n")
	b.WriteString("# default is used instead, so the box always starts.\n")
	for _, s := range settings {
		b.WriteString("\n")
		for _, l := range fold(strings.Join(s.help, " "), 78) {
			b.WriteString("# " + l + "\n")
		}
		fmt.Fprintf(&b, "#%s = %s\n", s.name, s.def)
	}
	return b.String()
}

// fold breaks text into lines of at most width characters at spaces.
func fold(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

func modern(algs []string) []string {
	var out []string
	for _, a := range algs {
		if policy.Weak(a) == "" {
			out = append(out, a)
		}
	}
	return out
}

// Copies are the copy settings (package copies; the keys and the
// password come from Settings.UseDir).
func (c Config) Copies() copies.Settings {
	return copies.Settings{Target: c.CopyTarget, TargetPassword: c.CopyTargetPassword,
		Keep: c.CopyKeep, BwLimit: c.CopyBwLimit}
}

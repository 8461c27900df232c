package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/bonesync/bonesync/appliance/accounts"
	"github.com/bonesync/bonesync/appliance/state"
	"github.com/bonesync/bonesync/appliance/users"
)

// reorderUserArgs moves flags before the subcommand words, so both
// "user -state D add bob" and "user add bob -state D" work.
func reorderUserArgs(args []string) []string {
	var flags, words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && a != "-" {
			flags = append(flags, a)
			if !strings.Contains(a, "=") && i+1 < len(args) && !slices.Contains([]string{"-quick", "--quick", "-h", "-help", "--help"}, a) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		words = append(words, a)
	}
	return append(flags, words...)
}

// userCmd manages accounts in the state directory. A running server sees the
// change at the next login.
func userCmd(f *flags, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(f.args) == 0 {
		return usagef("usage: bonesync user add|passwd|del|list|quota|key add ...")
	}
	c, ok := userCommands[f.args[0]]
	if !ok {
		return usagef("unknown user command %q (want add, passwd, del, list, quota or key add)", f.args[0])
	}
	if len(f.args) != c.words {
		return usagef("usage: bonesync user %s", c.form)
	}
	dir, err := state.Open(f.state)
	if err != nil {
		return err
	}
	db, err := users.Open(dir)
	if err != nil {
		return err
	}
	return c.run(&userRun{db: db, f: f, a: f.args, stdin: stdin, stdout: stdout, stderr: stderr})
}

// userRun is one `bonesync user` command: its words (a) and where it reads
// and writes.
type userRun struct {
	db             *users.DB
	f              *flags
	a              []string
	stdin          io.Reader
	stdout, stderr io.Writer
}

// userCommands are the `bonesync user` commands: how many words each
// takes (its own included), its usage, and what it does.
var userCommands = map[string]struct {
	words int
	form  string
	run   func(u *userRun) error
}{
	"add":    {2, "add NAME", (*userRun).add},
	"passwd": {2, "passwd NAME", (*userRun).passwd},
	"del":    {2, "del NAME", (*userRun).del},
	"list":   {1, "list", (*userRun).list},
	"quota":  {3, "quota NAME SIZE (like 50G, 500M, or none)", (*userRun).quota},
	"key":    {4, "key add NAME FILE", (*userRun).keyAdd},
}

func (u *userRun) add() error {
	name := u.a[1]
	if err := users.ValidName(name); err != nil {
		return err
	}
	if u.db.Exists(name) {
		return fmt.Errorf("user %s already exists", name)
	}
	pw, err := readPassword(u.stdin, u.stderr, name)
	if err != nil {
		return err
	}
	if err := u.db.Add(name, pw); err != nil {
		return err
	}
	fmt.Fprintf(u.stdout, "added user %s\n", name)
	return nil
}

func (u *userRun) passwd() error {
	name := u.a[1]
	if !u.db.Exists(name) {
		return fmt.Errorf("no user %s", name)
	}
	pw, err := readPassword(u.stdin, u.stderr, name)
	if err != nil {
		return err
	}
	if err := u.db.SetPassword(name, pw); err != nil {
		return err
	}
	fmt.Fprintf(u.stdout, "changed the password of %s\n", name)
	return nil
}

// del deletes the account through the one owner of deletions (package
// accounts). The parts that keep something keyed by it are the server's:
// a running server ends them when it sees the account gone, a stopped one
// at its next start; until then the account's identity keeps them dead.
func (u *userRun) del() error {
	if err := (&accounts.Service{Users: u.db}).Delete(u.a[1]); err != nil {
		return err
	}
	fmt.Fprintf(u.stdout, "removed user %s, with their app passwords, keys, shares and links (their files stay in %s)\n", u.a[1], u.f.files)
	return nil
}

func (u *userRun) list() error {
	list, err := u.db.List()
	if err != nil {
		return err
	}
	for _, in := range list {
		quota := ""
		if q := u.db.Quota(in.Name); q > 0 {
			quota = "  quota " + formatSize(q)
		}
		fmt.Fprintf(u.stdout, "%-32s %d key(s)  since %s%s\n", in.Name, in.Keys, in.Created.Format("2006-01-02"), quota)
	}
	return nil
}

func (u *userRun) quota() error {
	size, err := parseSize(u.a[2])
	if err != nil {
		return err
	}
	if err := u.db.SetQuota(u.a[1], size); err != nil {
		return err
	}
	if size == 0 {
		fmt.Fprintf(u.stdout, "%s has no quota now\n", u.a[1])
	} else {
		fmt.Fprintf(u.stdout, "%s may now store %s\n", u.a[1], formatSize(size))
	}
	return nil
}

func (u *userRun) keyAdd() error {
	if u.a[1] != "add" {
		return usagef("usage: bonesync user key add NAME FILE")
	}
	var b []byte
	var err error
	if u.a[3] == "-" {
		b, err = io.ReadAll(u.stdin)
	} else {
		b, err = os.ReadFile(u.a[3])
	}
	if err != nil {
		return err
	}
	n, err := u.db.AddKeys(u.a[2], b)
	if err != nil {
		return fmt.Errorf("%s: %w", u.a[3], err)
	}
	fmt.Fprintf(u.stdout, "added %d key(s) to %s\n", n, u.a[2])
	return nil
}

// readPassword asks twice on a terminal, without echo; otherwise (a script)
// it reads one line from stdin.
func readPassword(stdin io.Reader, stderr io.Writer, name string) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(stderr, "new password for %s: ", name)
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		fmt.Fprint(stderr, "again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		if string(a) != string(b) {
			return "", errors.New("the passwords differ")
		}
		return string(a), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// parseSize reads a quota: bytes, or a number with K, M, G or T (powers of
// 1024, an optional "iB" or "B" after), or "none".
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t == "NONE" || t == "0" {
		return 0, nil
	}
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			mult = int64(1) << (10 * (i + 1))
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("quota %q: want a size like 50G, 500M or 1T, or none", s)
	}
	return int64(v * float64(mult)), nil
}

func formatSize(n int64) string {
	for _, u := range []struct {
		s    string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', -1, 64) + " " + u.s
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

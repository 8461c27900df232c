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
	dir, err := state.Open(f.state)
	if err != nil {
		return err
	}
	db, err := users.Open(dir)
	if err != nil {
		return err
	}
	a := f.args
	need := func(n int, form string) error {
		if len(a) != n {
			return usagef("usage: bonesync user %s", form)
		}
		return nil
	}
	if len(a) == 0 {
		return usagef("usage: bonesync user add|passwd|del|list|quota|key add ...")
	}
	switch a[0] {
	case "add":
		if err := need(2, "add NAME"); err != nil {
			return err
		}
		if err := users.ValidName(a[1]); err != nil {
			return err
		}
		if db.Exists(a[1]) {
			return fmt.Errorf("user %s already exists", a[1])
		}
		pw, err := readPassword(stdin, stderr, a[1])
		if err != nil {
			return err
		}
		if err := db.Add(a[1], pw); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "added user %s\n", a[1])
	case "passwd":
		if err := need(2, "passwd NAME"); err != nil {
			return err
		}
		if !db.Exists(a[1]) {
			return fmt.Errorf("no user %s", a[1])
		}
		pw, err := readPassword(stdin, stderr, a[1])
		if err != nil {
			return err
		}
		if err := db.SetPassword(a[1], pw); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "changed the password of %s\n", a[1])
	case "del":
		if err := need(2, "del NAME"); err != nil {
			return err
		}
		if err := db.Delete(a[1]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed user %s (their files stay in %s)\n", a[1], f.files)
	case "list":
		list, err := db.List()
		if err != nil {
			return err
		}
		for _, u := range list {
			quota := ""
			if q := db.Quota(u.Name); q > 0 {
				quota = "  quota " + formatSize(q)
			}
			fmt.Fprintf(stdout, "%-32s %d key(s)  since %s%s\n", u.Name, u.Keys, u.Created.Format("2006-01-02"), quota)
		}
	case "quota":
		if err := need(3, "quota NAME SIZE (like 50G, 500M, or none)"); err != nil {
			return err
		}
		size, err := parseSize(a[2])
		if err != nil {
			return err
		}
		if err := db.SetQuota(a[1], size); err != nil {
			return err
		}
		if size == 0 {
			fmt.Fprintf(stdout, "%s has no quota now\n", a[1])
		} else {
			fmt.Fprintf(stdout, "%s may now store %s\n", a[1], formatSize(size))
		}
	case "key":
		if err := need(4, "key add NAME FILE"); err != nil || a[1] != "add" {
			return errors.New("usage: bonesync user key add NAME FILE")
		}
		var b []byte
		if a[3] == "-" {
			b, err = io.ReadAll(stdin)
		} else {
			b, err = os.ReadFile(a[3])
		}
		if err != nil {
			return err
		}
		n, err := db.AddKeys(a[2], b)
		if err != nil {
			return fmt.Errorf("%s: %w", a[3], err)
		}
		fmt.Fprintf(stdout, "added %d key(s) to %s\n", n, a[2])
	default:
		return usagef("unknown user command %q (want add, passwd, del, list, quota or key add)", a[0])
	}
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

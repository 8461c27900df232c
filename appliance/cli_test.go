package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The command line behaves as Unix tools do: help on -h, --help and help
// (per subcommand too, with only its flags), exit 0; --version; usage
// errors exit 2; a missing state directory is an error, not a new one.
func TestCommandLine(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing-here")
	conf := filepath.Join(t.TempDir(), "bonesync.conf")
	os.WriteFile(conf, []byte("hostname = nas\ntarget_ms = fast\n"), 0o644)
	good := filepath.Join(t.TempDir(), "good.conf")
	os.WriteFile(good, []byte("hostname = nas\n"), 0o644)
	for _, tc := range []struct {
		args     []string
		code     int
		has, not string
	}{
		{[]string{"-h"}, 0, "bonesync check-config", ""},
		{[]string{"--help"}, 0, "bonesync user", ""},
		{[]string{"help"}, 0, "bonesync bench", ""},
		{[]string{"serve", "-h"}, 0, "-https", "flag: help requested"},
		{[]string{"user", "--help"}, 0, "-files", "-https"},
		{[]string{"help", "report"}, 0, "-state", "-quick"},
		{[]string{"--version"}, 0, "bonesync ", ""},
		{[]string{"frobnicate"}, 2, "", ""},
		{[]string{"serve", "-nosuch"}, 2, "", ""},
		{[]string{"report", "extra"}, 2, "", ""},
		{[]string{"user", "-state", missing, "list"}, 1, "", ""},
		{[]string{"user", "-state", missing, "frobnicate"}, 2, "", ""},
		{[]string{"help", "frobnicate"}, 2, "", ""},
		{[]string{"check-config", "-config", conf}, 1, "target_ms", ""},
		{[]string{"check-config", "-config", good}, 0, "OK", ""},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), tc.args, strings.NewReader(""), &out, &errb)
		all := out.String() + errb.String()
		if err != nil {
			all += err.Error()
		}
		if got := exitCode(err); got != tc.code || !strings.Contains(all, tc.has) || tc.not != "" && strings.Contains(all, tc.not) {
			t.Errorf("bonesync %s: exit %d, want %d; output %q (want %q, not %q)", strings.Join(tc.args, " "), got, tc.code, all, tc.has, tc.not)
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a user command made the missing state directory")
	}
}

// docs/commands.md lists the commands as bonesync help does (make docs
// writes it): the README sends people there, and it had lost
// config-example while help had lost user quota.
func TestCommandsDocIsHelp(t *testing.T) {
	doc, err := os.ReadFile("../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- commands: begin[^>]*-->\n```\n(.*?)```\n<!-- commands: end -->").FindSubmatch(doc)
	if m == nil || string(m[1]) != usage {
		t.Errorf("docs/commands.md's list is not bonesync help's: run make docs")
	}
	for _, cmd := range []string{"user [-state DIR] quota", "config-example"} {
		if !strings.Contains(usage, cmd) {
			t.Errorf("bonesync help lacks %s", cmd)
		}
	}
}

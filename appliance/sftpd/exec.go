package sftpd

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"strings"
)

// digestCommands are the commands an exec channel answers, as coreutils
// would: rclone asks them for hashes (and probes them with no argument,
// hashing its empty stdin).
var digestCommands = map[string]string{"md5sum": "md5", "sha1sum": "sha1", "sha256sum": "sha256"}

// exec runs a command line: md5sum, sha1sum or sha256sum of paths in the
// user's tree (the stored digest where there is one), or else explains
// that the box speaks SFTP only. It returns the exit status.
func (s *Server) exec(ctx context.Context, user, line string, ch io.ReadWriter, stderr io.Writer) uint32 {
	words, err := shellWords(line)
	if err != nil || len(words) == 0 {
		fmt.Fprintln(stderr, onlySFTP)
		return 1
	}
	algo, ok := digestCommands[words[0]]
	if !ok {
		fmt.Fprintln(stderr, onlySFTP)
		return 1
	}
	name := words[0]
	if len(words) == 1 {
		// No file: the digest of stdin, as coreutils prints it.
		h := newSum(algo)
		if h == nil {
			return 1
		}
		io.Copy(h, ch)
		fmt.Fprintf(ch, "%x  -\n", h.Sum(nil))
		return 0
	}
	if len(words) > maxDigestPaths+1 {
		fmt.Fprintf(stderr, "%s: at most %d files at a time\n", name, maxDigestPaths)
		return 1
	}
	tree, err := s.Store.Tree(user)
	if err != nil {
		fmt.Fprintf(stderr, "%s: cannot open your files\n", name)
		return 1
	}
	defer tree.Close()
	tree.SetContext(ctx) // a digest stops when the client goes
	var status uint32
	done := map[string]bool{}
	for _, p := range words[1:] {
		if done[p] {
			continue // once is enough: a digest may mean reading the file
		}
		done[p] = true
		sum, err := tree.Sum(p, algo)
		if err != nil {
			msg := "cannot read it"
			if errors.Is(err, fs.ErrNotExist) {
				msg = "No such file or directory"
			}
			fmt.Fprintf(stderr, "%s: %s: %s\n", name, p, msg)
			status = 1
			continue
		}
		if _, err := fmt.Fprintf(ch, "%s  %s\n", hex.EncodeToString(sum), p); err != nil {
			return 1 // the client is gone: read no more files for it
		}
	}
	return status
}

// maxDigestPaths bounds one command's files, each of which may be read whole.
const maxDigestPaths = 1000

// shellWords splits a command line as a POSIX shell would, for the quoting
// clients use: single quotes, double quotes, backslashes. Anything that
// needs a real shell (variables, globs, pipes) is refused.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated quote")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				} else if strings.IndexByte("$`", s[i]) >= 0 {
					return nil, errors.New("needs a shell")
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated quote")
			}
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.IndexByte("|&;<>()$`*?[]{}~#", c) >= 0:
			return nil, errors.New("needs a shell")
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func newSum(algo string) hash.Hash {
	switch algo {
	case "md5":
		return md5.New()
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	}
	return nil
}

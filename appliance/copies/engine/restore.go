package engine

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"strings"

	"github.com/rclone/rclone/fs"
	"github.com/rclone/rclone/fs/walk"

	"github.com/bonesync/bonesync/appliance/budget"
	"github.com/bonesync/bonesync/appliance/copies"
	"github.com/bonesync/bonesync/appliance/store"
)

// Restored is what a restore brought back.
type Restored struct {
	Users     []string
	Files     int64
	Bytes     int64
	Checked   int64    // files whose digest matched the copy's list
	Mismatch  []string // USER/PATH whose digest did not
	Calendars map[string][]byte
}

// Restore brings the copy's files back into st, through the store (so
// they get their digests and ids as uploads do), with their dates; each
// file's digest is checked against the copy's list. A file already in
// the store is replaced. Each user's calendars come back as the backup
// file (Restored.Calendars), for the caller to load. The copy's remotes
// are opened as a run opens them, each key derived under a draw from mem
// (nil: unbounded).
func Restore(ctx context.Context, st copies.Settings, into Files, mem *budget.Budget) (Restored, error) {
	res := Restored{Calendars: map[string][]byte{}}
	root, err := configure(st)
	if err != nil {
		return res, err
	}
	if ctx, err = withTarget(ctx, st); err != nil {
		return res, err
	}
	ctx, _ = planMemory(0).engine(ctx)
	rem := &remotes{}
	defer rem.close()
	if err := rem.open(ctx, mem, &rem.files, root+"current/files"); err != nil {
		return res, fmt.Errorf("the copy: %w", err)
	}
	if err := rem.open(ctx, mem, &rem.extra, root+"current/extra"); err != nil {
		return res, fmt.Errorf("the copy: %w", err)
	}
	files, extra := rem.files, rem.extra
	tops, err := files.List(ctx, "")
	if errors.Is(err, fs.ErrorDirNotFound) {
		// Names are encrypted: with another password, nothing is there.
		return res, fmt.Errorf("no copy at %s with this password (a wrong password, or no copy made yet)", copies.Redacted(st.Target))
	}
	if err != nil {
		return res, fmt.Errorf("the copy's files: %w", err)
	}
	for _, e := range tops {
		if _, ok := e.(fs.Directory); !ok {
			continue
		}
		user := e.Remote()
		res.Users = append(res.Users, user)
		sums, err := readDigests(ctx, extra, user+".sha1")
		if err != nil {
			return res, err
		}
		if err := restoreUser(ctx, files, user, into, sums, &res); err != nil {
			return res, err
		}
		if o, err := extra.NewObject(ctx, user+"-calendars.zip"); err == nil {
			rc, err := o.Open(ctx)
			if err != nil {
				return res, err
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return res, fmt.Errorf("calendars of %s: %w", user, err)
			}
			res.Calendars[user] = b
		}
	}
	return res, nil
}

// readDigests reads a user's digest list from the copy (none: an empty map).
func readDigests(ctx context.Context, extra fs.Fs, name string) (map[string]string, error) {
	sums := map[string]string{}
	o, err := extra.NewObject(ctx, name)
	if err == fs.ErrorObjectNotFound {
		return sums, nil
	}
	if err != nil {
		return nil, err
	}
	rc, err := o.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if sum, p, ok := strings.Cut(sc.Text(), "  "); ok {
			sums[p] = sum
		}
	}
	return sums, sc.Err()
}

// restoreUser writes user's files from the copy into the store.
func restoreUser(ctx context.Context, files fs.Fs, user string, into Files, sums map[string]string, res *Restored) error {
	tree, err := into.Tree(user)
	if err != nil {
		return err
	}
	defer tree.Close()
	return walk.Walk(ctx, files, user, true, -1, func(dir string, entries fs.DirEntries, err error) error {
		if err != nil {
			return err
		}
		for _, e := range entries {
			p := strings.TrimPrefix(e.Remote(), user+"/")
			switch e := e.(type) {
			case fs.Directory:
				if err := tree.Mkdir(p); err != nil && !isExist(tree, p) {
					return fmt.Errorf("%s/%s: %w", user, p, err)
				}
			case fs.Object:
				if err := restoreFile(ctx, tree, p, e, res); err != nil {
					return fmt.Errorf("%s/%s: %w", user, p, err)
				}
				in, err := tree.Info(p)
				switch want, listed := sums[p]; {
				case err != nil:
					return err
				case !listed:
				case in.Sums != nil && hex.EncodeToString(in.Sums.SHA1[:]) == want:
					res.Checked++
				default:
					res.Mismatch = append(res.Mismatch, path.Join(user, p))
				}
			}
		}
		return nil
	})
}

// tree is what a restore does with a user's files.
type tree interface {
	Info(p string) (store.Info, error)
	Stat(p string) (iofs.FileInfo, error)
	Mkdir(p string) error
	Create(p string, keep bool) (*store.Upload, error)
}

func isExist(tree tree, p string) bool {
	fi, err := tree.Stat(p)
	return err == nil && fi.IsDir()
}

// restoreFile writes one file through the store, dated as in the copy.
func restoreFile(ctx context.Context, tree tree, p string, o fs.Object, res *Restored) error {
	rc, err := o.Open(ctx)
	if err != nil {
		return err
	}
	defer rc.Close()
	u, err := tree.Create(p, false)
	if err != nil {
		return err
	}
	n, err := io.Copy(u, rc)
	if err != nil {
		u.Abort()
		return err
	}
	u.SetModTime(o.ModTime(ctx))
	if err := u.Close(); err != nil {
		return err
	}
	res.Files++
	res.Bytes += n
	return nil
}

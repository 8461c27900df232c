package store

import (
	"github.com/bonesync/bonesync/appliance/rights"
)

// Size adds up the regular files at or below p: a folder's size as the
// web pages show it.
func (t *Tree) Size(p string) (int64, error) {
	t, c, err := t.at(p, rights.Read)
	if err != nil {
		return 0, err
	}
	return t.sizeOf(c)
}

// sizeOf is the bytes of the file c, or of the files at or below the
// folder c (its record's, if it has one).
func (t *Tree) sizeOf(c string) (int64, error) {
	fi, err := t.root.Lstat(c)
	switch {
	case err != nil:
		return 0, err
	case fi.IsDir():
		return t.folderSize(c)
	case fi.Mode().IsRegular():
		return fi.Size(), nil
	}
	return 0, nil
}

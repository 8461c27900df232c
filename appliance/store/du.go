package store

// Size adds up the regular files at or below p: a folder's size as the
// web pages show it.
func (t *Tree) Size(p string) (int64, error) {
	c, err := t.clean(p)
	if err != nil {
		return 0, err
	}
	return t.size(c)
}

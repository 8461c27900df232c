//go:build !linux

package update

// Open finds no card: only the card image (Linux) has system slots.
func Open(string, string) (*Card, error) { return nil, ErrNotCard }

func (*Card) Read(string) ([]byte, error)     { return nil, ErrNotCard }
func (*Card) Rewrite(string, []byte) error    { return ErrNotCard }
func (*Card) CreateFile(string, []byte) error { return ErrNotCard }

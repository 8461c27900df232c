//go:build !linux

package netup

import (
	"context"
	"errors"
)

// Up configures the network on Linux only; elsewhere it returns an error.
func Up(ctx context.Context, c Config) (*State, error) {
	return nil, errors.New("netup: bringing the network up is supported on Linux only")
}

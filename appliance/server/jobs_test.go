package server

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/bonesync/bonesync/appliance/front"
)

var discard = slog.New(slog.DiscardHandler)

// until returns a part that runs until its context ends, then takes after
// to return, and returns err.
func until(name string, serves bool, after time.Duration, err error) part {
	return part{name: name, serves: serves, run: func(ctx context.Context) error {
		<-ctx.Done()
		time.Sleep(after)
		return err
	}}
}

func TestRunParts(t *testing.T) {
	const grace = 200 * time.Millisecond
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		parts     []part
		stop      bool // the caller stops the server
		clean     bool
		wantErr   error
		wantNoErr bool
	}{
		{"asked to stop", []part{until("https", true, 0, nil), until("refresh", false, 0, nil)}, true, true, nil, true},
		{"a part fails", []part{until("https", true, 0, nil), {name: "sftp", serves: true, run: func(context.Context) error { return boom }}}, false, true, boom, false},
		{"requests cut", []part{until("https", true, 0, front.ErrCut)}, true, false, nil, true},
		{"a failure and a cut", []part{{name: "https", serves: true, run: func(context.Context) error { return errors.Join(boom, front.ErrCut) }}}, false, false, boom, false},
		{"a background job late", []part{until("https", true, 0, nil), until("trash", false, time.Second, nil)}, true, true, nil, true},
		{"a serving part late", []part{until("sftp", true, time.Second, nil)}, true, false, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.stop {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			done := make(chan struct{})
			var clean bool
			var err error
			go func() { clean, err = runParts(ctx, tc.parts, grace, discard); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("runParts did not return")
			}
			if clean != tc.clean {
				t.Errorf("clean = %v, want %v", clean, tc.clean)
			}
			if tc.wantNoErr && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

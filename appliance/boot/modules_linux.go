package boot

import (
	"context"
	"fmt"
	"strings"

	"github.com/bonesync/bonesync/appliance/kmod"
)

// loadModules loads the drivers for the devices present, then the board's
// own list (file systems, and drivers for devices not announced by the
// device tree).
func loadModules(_ context.Context, s *System) error {
	l, err := kmod.NewLoader(s.Log)
	if err != nil {
		return err
	}
	loaded := l.Coldplug()
	var failed []string
	for _, m := range s.Board.Modules {
		if err := l.Load(m); err != nil {
			failed = append(failed, err.Error())
		}
	}
	loaded = append(loaded, l.Coldplug()...)
	s.Log.Info("modules loaded", "count", len(loaded), "modules", strings.Join(loaded, " "))
	if len(failed) > 0 {
		return fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return nil
}

package boot

import (
	"time"

	"golang.org/x/sys/unix"
)

// shutdown stops the server (it saves the clock), syncs, unmounts the
// partitions and reboots or powers off. Nothing acknowledged is lost.
func (s *System) shutdown(powerOff bool) {
	s.downMu.Lock() // the first caller shuts down; any other waits forever
	s.shuttingDown.Store(true)
	s.Log.Info("stopping the server")
	if s.Server != nil {
		s.Server.Stop(15 * time.Second)
	}
	s.net.Stop()
	s.usb.stop()
	unix.Sync()
	for _, m := range []string{DataMount, PermMount, BootMount} {
		if err := unix.Unmount(m, 0); err != nil && err != unix.EINVAL {
			s.Log.Warn("cannot unmount: remounting read-only", "mount", m, "err", err)
			unix.Mount("", m, "", unix.MS_REMOUNT|unix.MS_RDONLY, "")
		}
	}
	unix.Sync()
	how, what := unix.LINUX_REBOOT_CMD_RESTART, "rebooting"
	if powerOff {
		how, what = unix.LINUX_REBOOT_CMD_POWER_OFF, "powering off"
	}
	s.Log.Info(what)
	if err := unix.Reboot(how); err != nil {
		s.Log.Error(what+" failed", "err", err)
	}
	select {}
}

package boot

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// shutdown stops the server (it saves the clock), syncs, unmounts the
// partitions and reboots or powers off. Nothing acknowledged is lost.
func (s *System) shutdown(powerOff bool) {
	s.downMu.Lock() // the first caller shuts down; any other waits forever
	fmt.Fprintf(s.Log, "bonesync: stopping the server\n")
	if s.Server != nil {
		s.Server.Stop(15 * time.Second)
	}
	s.net.Stop()
	unix.Sync()
	for _, m := range []string{PermMount, BootMount} {
		if err := unix.Unmount(m, 0); err != nil && err != unix.EINVAL {
			fmt.Fprintf(s.Log, "bonesync: unmount %s: %v; remounting read-only\n", m, err)
			unix.Mount("", m, "", unix.MS_REMOUNT|unix.MS_RDONLY, "")
		}
	}
	unix.Sync()
	how, what := unix.LINUX_REBOOT_CMD_RESTART, "rebooting"
	if powerOff {
		how, what = unix.LINUX_REBOOT_CMD_POWER_OFF, "powering off"
	}
	fmt.Fprintf(s.Log, "bonesync: %s\n", what)
	if err := unix.Reboot(how); err != nil {
		fmt.Fprintf(s.Log, "bonesync: %s: %v\n", what, err)
	}
	select {}
}

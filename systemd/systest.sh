#!/bin/bash
# Runs inside the Debian VM of the systemd test (systemd/vm_test.go), as a
# oneshot unit after boot: installs the .deb under the real systemd and
# checks the service. Each result is a "SYSTEST ok|FAIL ..." line on the
# serial console; then the VM powers off.
say() { echo "SYSTEST $*" > /dev/ttyS0; }
check() { local what=$1; shift; if "$@"; then say "ok $what"; else say "FAIL $what"; fi; }
active() { for _ in $(seq 1 "$1"); do systemctl is-active -q bonesync.service && return 0; sleep 1; done; return 1; }
mainpid() { systemctl show -p MainPID --value bonesync.service; }
restarts() { systemctl show -p NRestarts --value bonesync.service; }
# within N command...: the command succeeds within N seconds. The journal
# takes a service's output on its own path (stdout), apart from the state
# systemctl reports (sd_notify), so a line may arrive after the state.
within() { local n=$1; shift; for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 1; done; return 1; }

# The test's only change to the package: the quick benchmark budget, as a
# drop-in (crypto under QEMU's emulation is slow).
mkdir -p /etc/systemd/system/bonesync.service.d
printf '[Service]\nExecStart=\nExecStart=/usr/bin/bonesync serve -quick\n' > /etc/systemd/system/bonesync.service.d/quick.conf
mkdir -p /etc/systemd/system/bonesync-bench.service.d
printf '[Service]\nExecStart=\nExecStart=/usr/bin/bonesync bench -quick\n' > /etc/systemd/system/bonesync-bench.service.d/quick.conf

check install dpkg -i /root/bonesync.deb
check enabled systemctl is-enabled -q bonesync.service
check active active 600
say "info status: $(systemctl show -p StatusText --value bonesync.service)"
check socket-activated within 30 bash -c 'journalctl -u bonesync.service --no-pager | grep -q "serving HTTPS, HTTP and SFTP https=\[::\]:443 "'
# The URLs the box prints come from the sockets it got: SFTP on the socket
# unit's 2222, not the -ssh default of 22 (the system's own OpenSSH).
check printed-sftp-port within 30 bash -c 'journalctl -u bonesync.service --no-pager | grep -q "sftp -P 2222 admin@localhost" && ! journalctl -u bonesync.service --no-pager | grep -q "sftp admin@localhost" && bonesync report -state /var/lib/private/bonesync | grep -q "sftp -P 2222 admin@localhost"'
check https bash -c 'curl -sf http://localhost/ca.crt > /tmp/ca.crt && curl -sf --cacert /tmp/ca.crt https://localhost/report.json | grep -q "\"decision\""'
check sandboxed bash -c '[ "$(ps -o user= -p "$(systemctl show -p MainPID --value bonesync.service)")" != root ]'
# Priorities reach the journal as priorities: no "<6>" prefix left in the text.
check journal-priority within 30 bash -c 'journalctl -u bonesync.service -p info --no-pager | grep -q "serving HTTPS" && ! journalctl -u bonesync.service --no-pager | grep -q "<[0-7]>"'
# The level is the log line's own (slog), not guessed from its words: a
# failed login is a warning, "serving HTTPS" is not.
curl -s -o /dev/null --cacert /tmp/ca.crt -u admin:not-the-password https://localhost/dav/
check journal-levels within 30 bash -c 'journalctl -u bonesync.service -p warning --no-pager | grep -q "login failed proto=https" && ! journalctl -u bonesync.service -p warning --no-pager | grep -q "serving HTTPS"'

pid=$(mainpid); r=$(restarts)
kill -9 "$pid"
sleep 3
check restart-after-kill bash -c "$(declare -f active); active 120 && [ \"\$(systemctl show -p MainPID --value bonesync.service)\" != $pid ] && [ \$(systemctl show -p NRestarts --value bonesync.service) -gt $r ]"

pid=$(mainpid); r=$(restarts)
kill -STOP "$pid"   # wedged: alive, but neither serving nor feeding the watchdog
for _ in $(seq 1 120); do [ "$(mainpid)" != "$pid" ] && [ "$(mainpid)" != 0 ] && break; sleep 1; done
check watchdog-restart within 30 bash -c "[ \"\$(systemctl show -p MainPID --value bonesync.service)\" != $pid ] && journalctl -u bonesync.service --no-pager | grep -qi 'watchdog timeout'"
check active-again active 120

check bench-unit systemctl start bonesync-bench.service
check remove dpkg -r bonesync
check data-kept test -f /var/lib/private/bonesync/ca.crt
say DONE
systemctl poweroff

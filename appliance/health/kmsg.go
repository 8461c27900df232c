package health

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// KernelError is one line of the kernel's log that reports an error on
// the disk.
type KernelError struct {
	Seq     uint64 `json:"seq"`
	Message string `json:"message"`
}

// kernelErrors reads the kernel's log records after seq from r (one record
// per read, as /dev/kmsg gives them, up to io.EOF or EAGAIN) and returns
// those that report an error on disk whole or its partitions, and the last
// sequence number read.
func kernelErrors(r io.Reader, whole string, after uint64) (found []KernelError, last uint64, err error) {
	last = after
	buf := make([]byte, 8192) // a record is at most 1 KiB of text plus its fields
	for {
		n, err := r.Read(buf)
		switch {
		case errors.Is(err, syscall.EPIPE):
			continue // records overwritten before we read them: go on with the next
		case errors.Is(err, io.EOF), errors.Is(err, syscall.EAGAIN):
			return found, last, nil
		case err != nil:
			return found, last, err
		}
		prio, seq, msg, ok := parseRecord(buf[:n])
		if !ok || seq <= after && after != 0 {
			continue
		}
		last = max(last, seq)
		// Errors are logged at KERN_ERR or worse; ext4's daily reminder of
		// errors it recorded earlier ("error count since last fsck") is a
		// notice, and not a new error.
		if prio&7 <= 3 && reportsError(msg, whole) {
			found = append(found, KernelError{Seq: seq, Message: msg})
		}
	}
}

// parseRecord splits "PRIO,SEQ,USEC,FLAGS[,...];MESSAGE\n[ KEY=VALUE\n...]"
// (PRIO: facility*8 + level).
func parseRecord(b []byte) (prio int, seq uint64, msg string, ok bool) {
	head, rest, ok := bytes.Cut(b, []byte(";"))
	if !ok {
		return 0, 0, "", false
	}
	f := strings.Split(string(head), ",")
	if len(f) < 4 {
		return 0, 0, "", false
	}
	prio, err1 := strconv.Atoi(f[0])
	seq, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, "", false
	}
	msg, _, _ = strings.Cut(string(rest), "\n")
	return prio, seq, msg, true
}

// reportsError says whether a kernel message reports an error on the disk:
// the block layer's "I/O error, dev mmcblk0, sector ...", the MMC driver's
// "mmcblk0: error -110 ...", ext4's "EXT4-fs error (device mmcblk0p2)",
// "Buffer I/O error on dev sda1"; not a mount's "errors=remount-ro".
func reportsError(msg, whole string) bool {
	m := strings.ToLower(msg)
	i := strings.Index(m, whole)
	if i < 0 || !strings.Contains(m, "error") {
		return false
	}
	if !ourName(m[i+len(whole):], whole) {
		return false
	}
	return strings.Contains(strings.ReplaceAll(m, "errors=", ""), "error")
}

// ourName says whether the name found in a message, followed by rest, is
// whole or one of its partitions: mmcblk0p2 and mmcblk0boot0 for mmcblk0,
// sda1 for sda; not mmcblk01 or sdaa.
func ourName(rest, whole string) bool {
	if rest == "" || !isAlnum(rest[0]) {
		return true
	}
	if c := whole[len(whole)-1]; c >= '0' && c <= '9' {
		return len(rest) > 1 && rest[0] == 'p' && rest[1] >= '0' && rest[1] <= '9' || strings.HasPrefix(rest, "boot")
	}
	return rest[0] >= '0' && rest[0] <= '9'
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// readKernelLog reads /dev/kmsg from its oldest record to its newest and
// no further.
func readKernelLog(whole string, after uint64) ([]KernelError, uint64, error) {
	f, err := os.OpenFile("/dev/kmsg", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, after, err
	}
	defer f.Close()
	return kernelErrors(rawReader{f}, whole, after)
}

// rawReader reads the file with read(2) itself: *os.File's Read retries
// on EAGAIN through the poller, which would wait for the next record.
type rawReader struct{ f *os.File }

func (r rawReader) Read(p []byte) (int, error) {
	sc, err := r.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	if err := sc.Read(func(fd uintptr) bool {
		n, rerr = syscall.Read(int(fd), p)
		return true // never wait: EAGAIN is the end of the log
	}); err != nil {
		return 0, err
	}
	if n == 0 && rerr == nil {
		return 0, io.EOF
	}
	return max(n, 0), rerr
}

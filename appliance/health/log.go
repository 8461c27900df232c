package health

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/bonesync/bonesync/appliance/state"
)

// keepDays is how many days' writes the log keeps.
const keepDays = 90

// Day is what was written to the disk on one day (UTC).
type Day struct {
	Date    string `json:"date"` // 2006-01-02
	Written int64  `json:"written_bytes"`
}

// Report is a disk's health as the log has it: its writes over time, its
// errors, what it says of itself.
type Report struct {
	Disk     string   `json:"disk"`
	Identity Identity `json:"identity"`
	// Since is the first sample: the writes are counted from then.
	Since   time.Time `json:"since"`
	Sampled time.Time `json:"sampled"`
	// Written is every byte written since Since; Days the last keepDays.
	Written int64 `json:"written_bytes"`
	Days    []Day `json:"days,omitempty"`
	// IOErrors counts the kernel's log lines reporting an error on the
	// disk, across boots; LastIOError is the newest.
	IOErrors    int    `json:"io_errors"`
	LastIOError string `json:"last_io_error,omitempty"`
	// KernelLog says why the kernel's log could not be read ("" when it
	// was): the I/O errors are then not counted.
	KernelLog string    `json:"kernel_log_unreadable,omitempty"`
	FS        *FSErrors `json:"fs_errors,omitempty"` // nil: not an ext4 partition
	// Told is the count of errors (I/O and file system) the admin was
	// last told of (Log.Told).
	Told int `json:"errors_told,omitempty"`
}

// Errors are the I/O and file system errors counted.
func (r Report) Errors() int {
	n := r.IOErrors
	if r.FS != nil {
		n += r.FS.Count
	}
	return n
}

// kept is a disk's file in the log: the report, and where the last sample
// left the counters of this boot.
type kept struct {
	Report
	Counting counting `json:"counting"`
}

type counting struct {
	BootID  string `json:"boot_id"`
	Sectors int64  `json:"written_sectors"`
	Seq     uint64 `json:"kmsg_seq"`
}

// Problem is what should worry the admin, or "".
func (r Report) Problem() string {
	var p []string
	if r.IOErrors > 0 {
		p = append(p, fmt.Sprintf("%d I/O errors (the last: %s)", r.IOErrors, r.LastIOError))
	}
	if r.FS != nil && r.FS.Count > 0 {
		p = append(p, fmt.Sprintf("%d file system errors (the last at %s)", r.FS.Count, r.FS.Last.Format(time.DateTime)))
	}
	if r.Identity.WearWarning {
		p = append(p, r.Identity.Wear)
	}
	return strings.Join(p, "; ")
}

// WrittenIn is what was written in the last n days (today included).
func (r Report) WrittenIn(n int, now time.Time) int64 {
	from := now.UTC().AddDate(0, 0, -n+1).Format(time.DateOnly)
	var sum int64
	for _, d := range r.Days {
		if d.Date >= from {
			sum += d.Written
		}
	}
	return sum
}

// String is the report on one line, for the console's status.
func (r Report) String() string {
	id := r.Identity.Name
	if r.Identity.Date != "" {
		id += ", made " + r.Identity.Date
	}
	if id != "" {
		id = " (" + strings.TrimSpace(id) + ")"
	}
	s := fmt.Sprintf("%s%s: %s written in 7 days, %s since %s", r.Disk, id,
		Bytes(r.WrittenIn(7, r.Sampled)), Bytes(r.Written), r.Since.Format(time.DateOnly))
	if r.Identity.Wear != "" {
		s += ", " + r.Identity.Wear
	}
	if p := r.Problem(); p != "" {
		return s + "; WARNING: " + p
	}
	if r.KernelLog != "" {
		return s + "; no file system errors (the kernel's log is not readable here)"
	}
	return s + "; no errors"
}

// Bytes is n in the unit that suits it.
func Bytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%d kB", (n+999)/1000)
	}
}

// Log keeps each disk's report in a directory of the state (one file a
// disk: health/DISK.json).
//
// It writes to the disk only when the disk was written to anyway (at least
// saveAfter since the last save) or its errors changed: a box left idle
// must leave its card's counters flat, and a save of its own would
// otherwise be what the next sample sees written. What goes unsaved is
// counted at the next save, on that day.
type Log struct {
	Dir string

	mu   sync.Mutex
	last map[string]Report // the newest sample of each disk, saved or not
	// The kernel's view; nil in Sample reads the real ones.
	bootID func() (string, error)
	kmsg   func(whole string, after uint64) ([]KernelError, uint64, error)
}

// Dir is the log's directory in a state directory.
func Dir(stateDir string) string { return filepath.Join(stateDir, "health") }

// Read is the disk's last report; ok false when none was made.
func (l *Log) Read(whole string) (r Report, ok bool) {
	k, ok := l.read(whole)
	return k.Report, ok
}

func (l *Log) read(whole string) (k kept, ok bool) {
	b, err := os.ReadFile(filepath.Join(l.Dir, whole+".json"))
	if err != nil || json.Unmarshal(b, &k) != nil {
		return kept{}, false
	}
	return k, true
}

// saveAfter is how much must have been written to the disk since the last
// save for a sample to be saved.
const saveAfter = 1 << 20

// ReadAll is every disk's last report: this process's newest samples,
// else the saved ones.
func (l *Log) ReadAll() []Report {
	names, _ := filepath.Glob(filepath.Join(l.Dir, "*.json"))
	var out []Report
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range names {
		whole := strings.TrimSuffix(filepath.Base(n), ".json")
		if r, ok := l.last[whole]; ok {
			out = append(out, r)
		} else if r, ok := l.Read(whole); ok {
			out = append(out, r)
		}
	}
	return out
}

// Told records that the admin was told of n errors on the disk.
func (l *Log) Told(whole string, n int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	k, ok := l.read(whole)
	if !ok {
		return fmt.Errorf("health of %s: no report to mark", whole)
	}
	k.Told = n
	if r, ok := l.last[whole]; ok {
		r.Told = n
		l.last[whole] = r
	}
	return l.save(whole, k)
}

// Sample reads the disk's counters and errors now, adds what was written
// since the last sample to today's figure, and keeps the report (saved
// when the disk was written saveAfter since the last save or its errors
// changed).
func (l *Log) Sample(d Disk, now time.Time) (Report, error) { return l.sample(d, now, false) }

// Final is Sample, saved whatever was written: at shutdown, since the
// counters start again at the next boot.
func (l *Log) Final(d Disk, now time.Time) (Report, error) { return l.sample(d, now, true) }

func (l *Log) save(whole string, k kept) error {
	b, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return fmt.Errorf("health log: %w", err)
	}
	if err := state.WriteFile(filepath.Join(l.Dir, whole+".json"), b, 0o600); err != nil {
		return fmt.Errorf("health log: %w", err)
	}
	return nil
}

func (l *Log) sample(d Disk, now time.Time, force bool) (Report, error) {
	c, err := d.Counters()
	if err != nil {
		return Report{}, fmt.Errorf("health of %s: %w", d.Whole, err)
	}
	bootID, kmsg := l.bootID, l.kmsg
	if bootID == nil {
		bootID = readBootID
	}
	if kmsg == nil {
		kmsg = readKernelLog
	}
	boot, err := bootID()
	if err != nil {
		return Report{}, fmt.Errorf("health of %s: %w", d.Whole, err)
	}
	k, ok := l.read(d.Whole)
	if !ok {
		k.Since = now.UTC()
	}
	before := k.Report
	r := &k.Report
	r.Disk = d.Whole
	if k.Counting.BootID != boot { // a new boot: its counters began at zero
		k.Counting = counting{BootID: boot}
	}
	written := c.WrittenSectors - k.Counting.Sectors
	if written < 0 { // the disk was unplugged and plugged back: counters anew
		written = c.WrittenSectors
	}
	k.Counting.Sectors = c.WrittenSectors
	r.Written += written * 512
	r.Days = addDay(r.Days, now.UTC().Format(time.DateOnly), written*512)

	found, seq, err := kmsg(d.Whole, k.Counting.Seq)
	r.KernelLog = ""
	if err != nil {
		r.KernelLog = err.Error()
	} else {
		k.Counting.Seq = seq
		r.IOErrors += len(found)
		if len(found) > 0 {
			r.LastIOError = found[len(found)-1].Message
		}
	}
	if fe, ok := d.FSErrors(); ok {
		r.FS = &fe
	}
	r.Identity = d.Identity()
	r.Sampled = now.UTC()
	l.mu.Lock()
	if l.last == nil {
		l.last = map[string]Report{}
	}
	l.last[d.Whole] = *r
	l.mu.Unlock()
	if !force && ok && written*512 < saveAfter && r.IOErrors == before.IOErrors && reflect.DeepEqual(r.FS, before.FS) && r.Identity == before.Identity {
		return *r, nil
	}
	return *r, l.save(d.Whole, k)
}

// addDay adds n to the day's figure and drops days past keepDays.
func addDay(days []Day, date string, n int64) []Day {
	if len(days) > 0 && days[len(days)-1].Date == date {
		days[len(days)-1].Written += n
	} else {
		days = append(days, Day{Date: date, Written: n})
	}
	if len(days) > keepDays {
		days = days[len(days)-keepDays:]
	}
	return days
}

func readBootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b)), err
}

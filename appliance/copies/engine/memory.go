package engine

import (
	"context"
	"strconv"

	"github.com/rclone/rclone/fs"

	"github.com/bonesync/bonesync/appliance/budget"
)

// A run's memory, in one place. The engine (rclone) is built for a
// laptop: 16 MiB read ahead per transfer, 4 transfers, 8 checkers, 10,000
// files queued, 64 SFTP requests in flight per file. The box has 48 MB
// for the whole process, and one admission (budget.Admission, 16 MiB)
// that costly work draws from; so a run sets every one of those knobs
// here, from the box's budget, and draws from the admission what they add
// up to, in two parts that never overlap:
//
//   - each crypt remote the run opens derives its key from the password
//     with scrypt, whose memory is set by rclone's format: 16 MiB, the
//     whole admission, for a fraction of a second. A run opens its
//     remotes one at a time, before it sends anything, each under a draw
//     of keyMemory; the draw's release collects the 16 MiB, so that the next
//     derivation reuses it instead of taking 16 MiB more (two at once
//     took the console's run to 67 MB resident).
//   - the sync itself holds Run while it goes: the transfers' buffers,
//     the listings being compared, the queue, the SFTP connections.
//
// In the server, both come from the server's admission (kind "copy"),
// so a copy, a preview and a login's hash cannot together go over it;
// `bonesync copy run` is a process of its own and draws from its own.

// keyMemory is what deriving one crypt remote's key takes: scrypt with
// rclone's N = 16384, r = 8, p = 1 holds 128·r·N bytes (16 MiB) of V,
// 256·r of XY and 128·r·p of B, at once: a little over the admission,
// which budget.Wait grants whole.
const keyMemory = 128*8*16384 + 256*8 + 128*8*1

// runRoom is the most a run draws while its sync goes: what the
// admission keeps beside a login's Argon2id hash (users.argonMemory, 12
// MiB). A copy holds its draw for as long as it sends, hours for a
// first copy on the board; a login that waited for it would wait as
// long.
const runRoom = budget.Admission - 12<<20

// The engine's settings and what each costs, measured on amd64 with heap
// profiles of runs (10,000 files in 100 folders, and in one): the
// board's 32-bit pointers make its figures smaller.
const (
	// transfers is the files sent at once: the board's CPU (the crypt,
	// SSH's cipher), not its link, bounds a run; two keep it busy while
	// one waits on the disk or the network.
	transfers = 2
	// perTransfer is one file being sent: the crypt's two 64 KiB blocks
	// (clear and sealed) and the pool they come from, an SFTP packet as
	// it is read, marshalled and sealed (32 KiB each), an HTTP request's
	// buffers for the other targets, and the SFTP writer's goroutines
	// (one per request in flight).
	perTransfer = 384 << 10
	// sftpRequests is the SFTP writes (and reads, in a restore) in flight
	// per file, 32 KiB each: 512 KiB in flight is 50 MB/s at 10 ms round
	// trips, far above what the board encrypts (2-3 MB/s). rclone's 64
	// hold 2 MiB per file read.
	sftpRequests = 16
	// perConnection is one SSH connection to an SFTP target (the
	// transport's and the SFTP client's state and goroutines; an HTTP
	// target's is less). The files' remote keeps one per transfer and
	// checker, the other three remotes one each.
	perConnection = 64 << 10
	// perEntry is a file in a listing being compared: the box's side
	// (rclone's local object and its path) and the target's (the SFTP or
	// S3 object, its crypt wrapper, its name in clear and encrypted). A
	// folder of 10,000 files held 6 to 7 MB.
	perEntry = 700
	// backlog is the files queued for the checkers and for the transfers,
	// each queue holding a pair of objects a file: rclone's 10,000 held a
	// first copy's listing a second time; 64 keep two transfers busy.
	backlog = 64
	// fixed is the sync's own: its goroutines, the accounting, the
	// filter, the progress.
	fixed = 512 << 10
)

// memoryPlan is a run's memory: the engine's settings and the draws they
// add up to.
type memoryPlan struct {
	Run       int64 // drawn while the sync goes
	Over      int64 // what the sync needs beyond Run (a folder too large for runRoom)
	Transfers int
	Checkers  int // folders compared at once, each listing held whole
	Backlog   int
}

// planMemory says where a run's memory goes, for a run whose largest
// folder (on the box's side) holds largest entries.
//
// rclone compares a folder's listing on both sides, held whole, and each
// checker compares one folder at a time: the largest folder sets most of
// a run's memory beyond the transfers'. The checkers also ask the target
// for the dates it does not list (S3: a request a file), so an unchanged
// run goes at their number: four (to S3, 2.2 s of CPU for 10,000 files
// where two took 2.6) as long as four of the largest folder's listings
// fit runRoom, else two, else one. A folder too large for runRoom even
// alone (about 3,400 files) is not drawn for beyond it: Over says how
// much, and the run logs it. The alternative, drawing it all, would hold
// a login's hash back for the whole run.
func planMemory(largest int) memoryPlan {
	p := memoryPlan{Transfers: transfers, Checkers: 4, Backlog: backlog}
	for p.Checkers > 1 && p.need(largest) > runRoom {
		p.Checkers /= 2
	}
	need := p.need(largest)
	p.Run = min(need, runRoom)
	p.Over = need - p.Run
	return p
}

// need is what the sync holds with p's settings, its largest folder
// holding largest entries: the part of each constant above.
func (p memoryPlan) need(largest int) int64 {
	connections := p.Transfers + p.Checkers + 3 // the files' remote's, and one for each other
	return fixed + int64(p.Transfers)*perTransfer + int64(connections)*perConnection +
		2*int64(p.Backlog)*perEntry + int64(p.Checkers)*int64(max(largest, 1))*perEntry
}

// engine is ctx with the engine's settings for the plan.
func (p memoryPlan) engine(ctx context.Context) (context.Context, *fs.ConfigInfo) {
	ctx, ci := fs.AddConfig(ctx)
	ci.Transfers, ci.Checkers = p.Transfers, p.Checkers
	ci.MaxBacklog = p.Backlog
	// rclone reads ahead in whole 1 MiB buffers (asyncreader), 16 of them
	// per transfer by default; below 1 MiB it makes none: the source is
	// the box's own disk, read as the target takes it.
	ci.BufferSize = 0
	// Folder by folder, never the whole tree's listing at once
	// (--fast-list, for the targets that list recursively).
	ci.UseListR = false
	return ctx, ci
}

// sftpMemory is the SFTP backend's settings that bound its memory.
var sftpMemory = map[string]string{
	"concurrency": strconv.Itoa(sftpRequests),
	"chunk_size":  "32k", // the RFC's packet size, which every server takes
}

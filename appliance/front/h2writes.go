package front

import (
	"io"
	"net/http"
)

// Memory is where the front draws the buffers of large writes from
// (budget.Budget).
type Memory interface {
	TryTake(kind string, n int64) (release func(), ok bool)
}

// copyChunk is how much of a copied body an HTTP/2 answer is given per
// Write. Each Write to net/http's HTTP/2 server is a round trip through
// the connection's serve loop (the handler hands the data over and waits
// for its frames to be written), and io.Copy writes 32 KiB at a time:
// counted on the board's binary, a download costs 12.75 million
// instructions a MiB that way and 12.22 in 128 KiB writes.
const copyChunk = 128 << 10

// bigWrites gives a body copied into an HTTP/2 answer (ServeContent and
// io.Copy use ReadFrom) copyChunk at a time, from a buffer drawn from
// the memory budget; when the budget has no room at once, the copy goes
// as io.Copy would. Writes and everything else pass through;
// ResponseController reaches the writer beneath through Unwrap.
type bigWrites struct {
	http.ResponseWriter
	mem Memory
}

func (w bigWrites) ReadFrom(src io.Reader) (int64, error) {
	if w.mem != nil {
		release, ok := w.mem.TryTake("HTTP/2 download", copyChunk)
		if !ok {
			return io.Copy(w.ResponseWriter, src)
		}
		defer release()
	}
	// Only src's Read: a file's WriteTo would copy 32 KiB at a time again.
	return io.CopyBuffer(w.ResponseWriter, struct{ io.Reader }{src}, make([]byte, copyChunk))
}

func (w bigWrites) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w bigWrites) Unwrap() http.ResponseWriter { return w.ResponseWriter }

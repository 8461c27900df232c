package budget

import (
	"errors"
	"net/http"
	"strconv"
)

// Answer tells an HTTP client why its request was refused a grant, and
// reports whether err was such a refusal (false: nothing written, the
// caller answers err itself). Busy is 503 with Retry-After; an operation
// that can never fit is tooLarge, which the caller picks: 413 where the
// request's own body is what is too large, 507 where the work it asks
// for is.
func Answer(w http.ResponseWriter, err error, tooLarge int) bool {
	var r *Refusal
	if !errors.As(err, &r) {
		return false
	}
	switch {
	case errors.Is(err, ErrTooLarge):
		http.Error(w, r.Error(), tooLarge)
	case errors.Is(err, ErrBusy):
		w.Header().Set("Retry-After", strconv.Itoa(int(RetryAfter.Seconds())))
		http.Error(w, r.Error()+": try again shortly", http.StatusServiceUnavailable)
	default: // the client went away, or its request's deadline passed
		http.Error(w, r.Error(), http.StatusServiceUnavailable)
	}
	return true
}

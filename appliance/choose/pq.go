package choose

import (
	"fmt"
	"time"
)

// PQ is what the post-quantum decision needs: the chosen key measured with
// the classical and with the hybrid key exchange.
type PQ struct {
	Setting  string // "auto", "on" or "off"
	Target   time.Duration
	Classic  time.Duration // p95 at the configured concurrency, classical exchange
	Hybrid   time.Duration // the same with the hybrid exchange
	Measured bool          // false if the hybrid run was dropped or not made
}

// PostQuantum decides whether to offer the hybrid key exchange, and why.
// On "auto" it is offered when, with the chosen key, it still meets the
// target; a hybrid that costs more than the target allows is left out, since
// the classical exchange is what every client can fall back to anyway.
func PostQuantum(in PQ) (bool, string) {
	switch in.Setting {
	case "on":
		return true, "hybrid post-quantum key exchange is on in the config"
	case "off":
		return false, "hybrid post-quantum key exchange is off in the config"
	}
	if !in.Measured {
		return false, "hybrid key exchange not offered: it was not measured within the budget, or was clearly over the target"
	}
	if in.Hybrid <= in.Target {
		return true, fmt.Sprintf("hybrid key exchange offered: p95 %s with it (%s without) meets the %s target",
			msec(in.Hybrid), msec(in.Classic), msec(in.Target))
	}
	return false, fmt.Sprintf("hybrid key exchange not offered: p95 %s with it (%s without) misses the %s target",
		msec(in.Hybrid), msec(in.Classic), msec(in.Target))
}

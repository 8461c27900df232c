package measure

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Stats summarises samples in milliseconds.
type Stats struct {
	N   int
	P50 float64
	P95 float64
	P99 float64
	Max float64
}

// Summarise computes Stats over samples (milliseconds), using the
// nearest-rank percentile so that every figure is a sample that was seen.
func Summarise(samples []float64) Stats {
	if len(samples) == 0 {
		return Stats{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return Stats{N: len(s), P50: rank(s, 50), P95: rank(s, 95), P99: rank(s, 99), Max: s[len(s)-1]}
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of s,
// which it does not modify: always a sample that was seen, the zero value
// for none. The self-benchmark and the comparison with nginx and OpenSSH
// (bench/) both take their percentiles here.
func Percentile[T cmp.Ordered](s []T, p float64) T {
	if len(s) == 0 {
		var zero T
		return zero
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return rank(c, p)
}

func rank[T cmp.Ordered](sorted []T, p float64) T {
	i := int(math.Ceil(float64(len(sorted))*p/100)) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// Duration converts a figure in milliseconds back to a time.Duration.
func Duration(msec float64) time.Duration { return time.Duration(msec * float64(time.Millisecond)) }

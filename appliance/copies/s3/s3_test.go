package s3

import (
	"fmt"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/rclone/rclone/fs/fserrors"
)

// Dates go on the bucket as rclone's S3 backend writes them ("mtime":
// decimal Unix seconds, sign and magnitude, no trailing zeros), so each
// side reads the other's exactly.
func TestMtime(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		text string
	}{
		{time.Date(2012, 11, 27, 18, 15, 5, 123456789, time.UTC), "1354040105.123456789"},
		{time.Date(2019, 5, 6, 7, 8, 9, 500_000_000, time.UTC), "1557126489.5"},
		{time.Date(2019, 5, 6, 7, 8, 9, 0, time.UTC), "1557126489"},
		{time.Unix(-1, -500_000_000), "-1.5"},
		{time.Unix(0, -500_000_000), "-0.5"},
		{time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC), "-14182940"},
	} {
		if got := formatMtime(c.t); got != c.text {
			t.Errorf("formatMtime(%v) = %q, want %q", c.t, got, c.text)
		}
		if got, err := parseMtime(c.text); err != nil || !got.Equal(c.t) {
			t.Errorf("parseMtime(%q) = %v, %v; want %v", c.text, got, err, c.t)
		}
	}
	if got, err := parseMtime("1.1234567891"); err != nil || !got.Equal(time.Unix(1, 123456789)) {
		t.Errorf("beyond nanoseconds: %v, %v", got, err) // dropped, as rclone's parser drops them
	}
	for _, bad := range []string{"", "x", "1.x", "1e9"} {
		if _, err := parseMtime(bad); err == nil {
			t.Errorf("parseMtime(%q) took it", bad)
		}
	}
}

func TestEndpoint(t *testing.T) {
	for s, want := range map[string]string{"https://s3.example.net": "s3.example.net", "http://10.0.0.2:9000/": "10.0.0.2:9000"} {
		if _, host, err := endpoint(s); err != nil || host != want {
			t.Errorf("endpoint(%q) = %q, %v", s, host, err)
		}
	}
	for _, bad := range []string{"s3.example.net", "https://", "https://host/bucket", "ftp://host"} {
		if _, _, err := endpoint(bad); err == nil {
			t.Errorf("endpoint(%q) took it", bad)
		}
	}
}

// Parts: 5 MiB while 10,000 of them hold the object, then whole MiBs
// enough for it in 10,000 (S3's most).
func TestPartSize(t *testing.T) {
	for size, want := range map[int64]uint64{
		1:               5 << 20,
		48 << 30:        5 << 20,
		5 << 20 * 10000: 5 << 20,
		5<<20*10000 + 1: 6 << 20,
		100 << 30:       11 << 20,
		5 << 40:         525 << 20,
	} {
		got := partSizeFor(size)
		if got != want || uint64(size) > got*10000 {
			t.Errorf("partSizeFor(%d) = %d, want %d", size, got, want)
		}
	}
}

// A store's busy answer to one part, wrapped with the part's number, has
// the engine send the file again; a refusal does not.
func TestRetryable(t *testing.T) {
	busy := fmt.Errorf("part 3: %w", minio.ErrorResponse{StatusCode: 503})
	if err := retryable(busy, busy); !fserrors.IsRetryError(err) {
		t.Errorf("retryable(%v) = %v, not to be sent again", busy, err)
	}
	denied := minio.ErrorResponse{StatusCode: 403, Code: "AccessDenied"}
	if err := retryable(denied, denied); fserrors.IsRetryError(err) {
		t.Errorf("retryable(%v) = %v, to be sent again", denied, err)
	}
}

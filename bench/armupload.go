package main

// The upload count: ARM instructions per MiB a WebDAV PUT costs `bonesync
// serve` (TLS, HTTP, the store, the digests; bench/armcost), built GOARM=7
// as on the board, against the same build without digests
// (bench/nohash.go). On x86 the digest is a large share of a cheap upload;
// on the board's core TLS is dear and the share is what matters.

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"time"
)

const (
	armUploadMiB  = 8 // per PUT
	armUploadPuts = 2
)

// armUploads counts both builds: bin, the board's (built for the
// handshakes already), and the same built without digests; it returns
// million instructions per MiB, with digests and without.
func armUploads(ctx context.Context, o *options, plugin, bin, box string) (hashed, plain float64, err error) {
	nohash := filepath.Join(o.work, "armcost-nohash")
	if err := buildArmcost(ctx, o, nohash, true, true); err != nil {
		return 0, 0, err
	}
	for _, b := range []struct {
		tags, bin string
		into      *float64
	}{{"", bin, &hashed}, {"nohash", nohash, &plain}} {
		o.logf("arm: uploads, %d × %d MiB, %s", armUploadPuts, armUploadMiB, map[bool]string{true: "with digests", false: "without digests"}[b.tags == ""])
		if *b.into, err = countUploads(ctx, o, plugin, b.bin, box); err != nil {
			return 0, 0, err
		}
	}
	return hashed, plain, nil
}

// countUploads runs one build under qemu-arm with WebDAV on and counts the
// instructions of the measured PUTs, after a warm-up PUT (which pays for
// the login's Argon2 hash).
func countUploads(ctx context.Context, o *options, plugin, bin, box string) (float64, error) {
	a, err := startArmServer(ctx, o, plugin, bin, box)
	if err != nil {
		return 0, err
	}
	defer a.close()
	tlsAddr := a.tlsAddr
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		DisableKeepAlives: true, // each PUT's connection ends before the next marker
	}, Timeout: 10 * time.Minute}
	body := make([]byte, armUploadMiB<<20)
	for i := range body {
		body[i] = byte(i*31 + i>>11)
	}
	put := func(name string) error {
		req, _ := http.NewRequestWithContext(ctx, "PUT", "https://"+tlsAddr+"/dav/"+name, bytes.NewReader(body))
		req.SetBasicAuth("bench", "bench-password")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("PUT %s = %s", name, resp.Status)
		}
		return nil
	}
	if err := put("warm.bin"); err != nil {
		return 0, err
	}
	if err := a.say("mark 1"); err != nil {
		return 0, err
	}
	for i := 0; i < armUploadPuts; i++ {
		if err := put("up-" + strconv.Itoa(i) + ".bin"); err != nil {
			return 0, err
		}
	}
	if err := a.say("mark 2"); err != nil {
		return 0, err
	}
	marks, err := a.marks()
	if err != nil {
		return 0, err
	}
	if marks[2] == 0 {
		return 0, fmt.Errorf("no marker counts in %s", a.log)
	}
	return marks[2] / (armUploadMiB * armUploadPuts) / 1e6, nil
}

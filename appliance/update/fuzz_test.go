package update

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"
)

// FuzzManifest: whatever manifest a bundle carries (signed here, so that
// the fuzzer reaches the checks behind the signature) and whatever follows
// it, reading never panics, and a bundle accepted has a kernel and an
// initramfs, each file with room in a slot, and every file it lists
// delivered whole.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"format":1,"version":"1","boards":["b"],"files":[{"name":"zImage","size":1,"sha256":"`+sum("k")+`"},{"name":"initrd.img","size":1,"sha256":"`+sum("i")+`"}]}`), []byte("ki"))
	f.Add([]byte(`{"format":1,"version":"1","boards":["b"],"files":[{"name":"dtbs/x.dtb","size":1,"sha256":"`+sum("d")+`"}]}`), []byte("d"))
	f.Add([]byte(`{"format":2}`), []byte(""))
	f.Add([]byte(`[`), []byte("x"))
	f.Fuzz(func(t *testing.T, manifest, data []byte) {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		tw.WriteHeader(&tar.Header{Name: ManifestName, Size: int64(len(manifest)), Mode: 0o644, Format: tar.FormatPAX,
			PAXRecords: map[string]string{sigRecord: sign(testKey, manifest)}})
		tw.Write(manifest)
		// The data as the files the manifest would name, one byte each.
		for i, name := range []string{KernelFile, InitrdFile} {
			if i < len(data) {
				tw.WriteHeader(&tar.Header{Name: name, Size: 1, Mode: 0o644})
				tw.Write(data[i : i+1])
			}
		}
		tw.Close()
		got := map[string]int{}
		m, err := ReadBundle(&b, "b", testKeys, func(*Manifest) (Sink, error) { return countSink(got), nil })
		if err != nil {
			return
		}
		if m.file(KernelFile) == nil || m.file(InitrdFile) == nil {
			t.Fatalf("accepted without a kernel or initramfs: %+v", m)
		}
		for _, f := range m.Files {
			if f.Size <= 0 || f.Size > Capacity(f.Name) || int64(got[f.Name]) != f.Size {
				t.Fatalf("accepted %s: %d bytes listed, %d delivered, room for %d", f.Name, f.Size, got[f.Name], Capacity(f.Name))
			}
		}
	})
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// countSink counts the bytes delivered for each file.
type countSink map[string]int

func (c countSink) Begin(f ManifestFile) (io.Writer, error) { return countWriter{c, f.Name}, nil }

type countWriter struct {
	c    countSink
	name string
}

func (w countWriter) Write(p []byte) (int, error) {
	w.c[w.name] += len(p)
	return len(p), nil
}

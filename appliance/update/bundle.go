package update

import (
	"archive/tar"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ManifestName is the bundle's first entry.
const ManifestName = "manifest.json"

// Manifest says what a bundle holds: the version, the boards it boots on,
// and each file with its size and SHA-256.
type Manifest struct {
	Format  int            `json:"format"` // 1
	Version string         `json:"version"`
	Boards  []string       `json:"boards"`
	Files   []ManifestFile `json:"files"`
}

// ManifestFile is one file of a slot: "zImage", "initrd.img", "dtbs/NAME".
type ManifestFile struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// BadBundle is a bundle refused for what it holds (the client's fault),
// as against a failure to write the card.
type BadBundle struct{ Err error }

func (e *BadBundle) Error() string { return e.Err.Error() }
func (e *BadBundle) Unwrap() error { return e.Err }

// versionChars are those a version may use: it is shown on consoles and
// passes through U-Boot's shell, which re-parses quotes.
var versionRE = regexp.MustCompile(`^[A-Za-z0-9._+~-]{1,64}$`)

// hasDTB says whether the bundle carries a device tree.
func (m *Manifest) hasDTB() bool {
	for _, f := range m.Files {
		if strings.HasPrefix(f.Name, DTBDir+"/") {
			return true
		}
	}
	return false
}

// check refuses a manifest this box cannot apply.
func (m *Manifest) check(board string) error {
	if m.Format != 1 {
		return fmt.Errorf("bundle format %d; this version reads format 1", m.Format)
	}
	if !versionRE.MatchString(m.Version) {
		return fmt.Errorf("the manifest's version %q is not 1 to 64 of A-Z a-z 0-9 . _ + ~ -", m.Version)
	}
	dtbs := 0
	for _, f := range m.Files {
		if strings.HasPrefix(f.Name, DTBDir+"/") {
			dtbs++
		}
	}
	if dtbs > 1 {
		return errors.New("the bundle holds more than one device tree; a slot boots one")
	}
	if board != "" && !slices.Contains(m.Boards, board) {
		return fmt.Errorf("the bundle is for %v, this is a %s", m.Boards, board)
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		c := Capacity(f.Name)
		switch {
		case c == 0:
			return fmt.Errorf("the bundle holds %q, which no slot has room for", f.Name)
		case f.Size <= 0 || f.Size > c:
			return fmt.Errorf("%s: %d bytes; a slot holds 1 to %d", f.Name, f.Size, c)
		case len(f.SHA256) != 64:
			return fmt.Errorf("%s: no SHA-256 in the manifest", f.Name)
		case seen[f.Name]:
			return fmt.Errorf("%s is in the manifest twice", f.Name)
		}
		seen[f.Name] = true
	}
	if !seen[KernelFile] || !seen[InitrdFile] {
		return fmt.Errorf("the bundle lacks %s or %s", KernelFile, InitrdFile)
	}
	return nil
}

func (m *Manifest) file(name string) *ManifestFile {
	for i := range m.Files {
		if m.Files[i].Name == name {
			return &m.Files[i]
		}
	}
	return nil
}

// WriteBundle writes a bundle (a tar: the manifest first, then the files)
// from files on disk, keyed by their slot names, signed with key (nil: not
// signed, which no box takes). The image builder calls it.
func WriteBundle(w io.Writer, version string, boards []string, files map[string]string, mtime time.Time, key ed25519.PrivateKey) error {
	m := Manifest{Format: 1, Version: version, Boards: boards}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	data := map[string][]byte{} // read once: hashed, then written
	for _, n := range names {
		b, err := os.ReadFile(files[n])
		if err != nil {
			return err
		}
		data[n] = b
		sum := sha256.Sum256(b)
		m.Files = append(m.Files, ManifestFile{Name: n, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
	}
	if err := m.check(""); err != nil {
		return err
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	mb = append(mb, '\n')
	tw := tar.NewWriter(w)
	put := func(name string, b []byte, pax map[string]string) error {
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: mtime, Format: tar.FormatUSTAR}
		if pax != nil {
			h.Format, h.PAXRecords = tar.FormatPAX, pax
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	var sig map[string]string
	if key != nil {
		sig = map[string]string{sigRecord: sign(key, mb)}
	}
	if err := put(ManifestName, mb, sig); err != nil {
		return err
	}
	for _, n := range names {
		if err := put(n, data[n], nil); err != nil {
			return err
		}
	}
	return tw.Close()
}

// Sink takes a bundle's files as they are read: Begin before each.
type Sink interface {
	Begin(f ManifestFile) (io.Writer, error)
}

// ReadBundle reads a bundle from r: the manifest (its signature checked
// against the trusted keys, then checked for board), then each file into
// the writer sink gives for it, checking its size and SHA-256 as it goes.
// It fails on anything the manifest does not list, on a file listed twice
// or missing, and on trailing data that is not tar.
func ReadBundle(r io.Reader, board string, trusted []Key, sink func(*Manifest) (Sink, error)) (*Manifest, error) {
	m, err := readBundle(r, board, trusted, sink)
	var bad *BadBundle
	if err != nil && !errors.As(err, &bad) && !errors.As(err, new(*cardError)) {
		err = &BadBundle{err}
	}
	var ce *cardError
	if errors.As(err, &ce) {
		err = ce.err
	}
	return m, err
}

// cardError marks a failure to write what was read: not the bundle's.
type cardError struct{ err error }

func (e *cardError) Error() string { return e.err.Error() }

// cardWriter marks its writer's errors as the card's.
type cardWriter struct{ w io.Writer }

func (c cardWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil {
		err = &cardError{err}
	}
	return n, err
}

// maxManifest is the largest manifest read: a few hundred bytes a file.
const maxManifest = 64 << 10

func readBundle(r io.Reader, board string, trusted []Key, sink func(*Manifest) (Sink, error)) (*Manifest, error) {
	tr := tar.NewReader(r)
	h, err := tr.Next()
	if err != nil {
		return nil, fmt.Errorf("not an update bundle (a tar starting with %s): %w", ManifestName, err)
	}
	if h.Name != ManifestName {
		return nil, fmt.Errorf("not an update bundle: its first entry is %q, not %s", h.Name, ManifestName)
	}
	if h.Size > maxManifest {
		return nil, fmt.Errorf("%s is %d bytes; a manifest is at most %d", ManifestName, h.Size, maxManifest)
	}
	mb, err := io.ReadAll(tr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	// Nothing of the manifest is believed before its signature is.
	if err := checkSignature(h.PAXRecords[sigRecord], mb, trusted); err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	if err := m.check(board); err != nil {
		return nil, err
	}
	s, err := sink(&m)
	if err != nil {
		var bad *BadBundle
		if errors.As(err, &bad) {
			return nil, err
		}
		return nil, &cardError{err}
	}
	got := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		f := m.file(h.Name)
		if f == nil || got[h.Name] {
			return nil, fmt.Errorf("bundle: %q is not in the manifest, or comes twice", h.Name)
		}
		if h.Size != f.Size {
			return nil, fmt.Errorf("bundle: %s is %d bytes, the manifest says %d", h.Name, h.Size, f.Size)
		}
		w, err := s.Begin(*f)
		if err != nil {
			return nil, &cardError{err}
		}
		sum := sha256.New()
		n, err := io.Copy(io.MultiWriter(cardWriter{w}, sum), tr)
		var ce *cardError
		if errors.As(err, &ce) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.Name, err)
		}
		if n != f.Size || hex.EncodeToString(sum.Sum(nil)) != f.SHA256 {
			return nil, fmt.Errorf("%s: its SHA-256 is not the manifest's: the bundle is damaged", h.Name)
		}
		got[h.Name] = true
	}
	for _, f := range m.Files {
		if !got[f.Name] {
			return nil, fmt.Errorf("bundle: %s is missing (a cut-off upload?)", f.Name)
		}
	}
	return &m, nil
}

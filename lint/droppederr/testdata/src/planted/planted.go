package planted

import (
	"encoding/json"
	"os"
)

type book struct{ Shares []string }

// The share book's bug, planted: the encoder's error dropped.
func save(b book) error {
	data, _ := json.Marshal(b) // want `the error of encoding/json.Marshal is assigned to _`
	return os.WriteFile("shares.json", data, 0o600)
}

func dropped(name string, b []byte) {
	os.WriteFile(name, b, 0o600) // want `the error of os.WriteFile is dropped`
	f, err := os.Create(name)
	if err != nil {
		return
	}
	defer f.Close()              // want `the error of \(\*os.File\).Close is dropped by defer`
	_, _ = f.Write(b)            // want `the error of \(\*os.File\).Write is assigned to _`
	f.Sync()                     // want `the error of \(\*os.File\).Sync is dropped`
	json.NewEncoder(f).Encode(b) // want `the error of \(\*encoding/json.Encoder\).Encode is dropped`
}

// Handled, or said why: no report.
func fine(name string, b []byte) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	r, err := os.Open(name)
	if err != nil {
		return err
	}
	defer r.Close() // only read: nothing to lose
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close() // dropped: the write's error is the one to report
		return err
	}
	return f.Close()
}

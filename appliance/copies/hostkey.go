package copies

import "fmt"

// HostKeyChanged is a run refused because the SFTP target offered another
// host key than the one pinned at the first run (KnownHosts): the target
// was reinstalled or its keys were made again, or another machine answers
// at its address. The last run's Status carries it until the new key is
// accepted (engine.AcceptHostKey: the admin page, or bonesync copy
// accept-key).
type HostKeyChanged struct {
	Host string `json:"host"` // host:port
	// Pinned and Offered are the keys' SHA256 fingerprints as ssh-keygen
	// -lf prints them (SHA256:...), with their type (ED25519, RSA...).
	Pinned  string `json:"pinned"`
	Offered string `json:"offered"`
	// Key is the offered key in authorized_keys form: what accepting pins.
	Key string `json:"key"`
}

func (e *HostKeyChanged) Error() string {
	return fmt.Sprintf("the SFTP target %s offers another host key, %s, than the one pinned, %s: "+
		"if the target was reinstalled or its keys made again, check there that the new key is its own "+
		"and accept it (the admin page, or bonesync copy accept-key); if not, another machine may be answering at its address",
		e.Host, e.Offered, e.Pinned)
}

package main

import (
	"crypto"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/ssh"

	"github.com/bonesync/bonesync/appliance/keys"
	"github.com/bonesync/bonesync/appliance/measure/benchkeys"
)

// benchKey returns bonesync's embedded benchmark key of that type and its
// PKCS#8 PEM, the form bonesync's state directory, nginx and crypto/tls all
// read.
func benchKey(name string) (crypto.Signer, []byte, error) {
	k, err := benchkeys.Get(keys.Name(name))
	if err != nil {
		return nil, nil, err
	}
	b, err := keys.MarshalPEM(k)
	return k, b, err
}

// openSSHKey is k in OpenSSH's private key format, for sshd's HostKey.
func openSSHKey(k crypto.Signer) ([]byte, error) {
	blk, err := ssh.MarshalPrivateKey(k, "")
	if err != nil {
		return nil, fmt.Errorf("OpenSSH form of the host key: %w", err)
	}
	return pem.EncodeToMemory(blk), nil
}

// sshdHostKey is the ed25519 benchmark key, sshd's host key in both
// comparisons, and its OpenSSH form.
func sshdHostKey() (crypto.Signer, []byte, error) {
	host, _, err := benchKey("ed25519")
	if err != nil {
		return nil, nil, err
	}
	pemKey, err := openSSHKey(host)
	return host, pemKey, err
}

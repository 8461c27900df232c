package keys

import (
	"crypto/rand"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, name := range []Name{ECDSAP256, ECDSAP384, Ed25519, RSA1024} {
		k, err := Generate(name, rand.Reader)
		if err != nil {
			t.Fatalf("Generate(%s): %v", name, err)
		}
		b, err := MarshalPEM(k)
		if err != nil {
			t.Fatal(err)
		}
		k2, err := ParsePEM(b)
		if err != nil {
			t.Fatalf("ParsePEM(%s): %v", name, err)
		}
		if got, err := NameOf(k2.Public()); got != name || err != nil {
			t.Errorf("NameOf(parsed %s) = %s, %v", name, got, err)
		}
	}
}

func TestStrengths(t *testing.T) {
	for _, tc := range []struct {
		name Name
		want int
	}{{RSA1024, 80}, {RSA2048, 112}, {RSA3072, 128}, {RSA4096, 128}, {ECDSAP256, 128}, {ECDSAP384, 192}, {Ed25519, 128}, {"rsa-512", 0}} {
		if got := Strength(tc.name); got != tc.want {
			t.Errorf("Strength(%s) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestParseGarbage(t *testing.T) {
	if _, err := ParsePEM([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")); err == nil {
		t.Error("ParsePEM(garbage) succeeded")
	}
}

package secrets_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/secrets"
)

func TestKeys(t *testing.T) {
	if _, err := secrets.NewSealer(nil); !errors.Is(err, secrets.ErrNoKey) {
		t.Fatalf("no key: %v", err)
	}
	if _, err := secrets.NewSealer([]byte("short")); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
	if _, err := secrets.ParseKey(""); !errors.Is(err, secrets.ErrNoKey) {
		t.Fatalf("empty key: %v", err)
	}
	for _, enc := range []string{"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=", "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE"} {
		if k, err := secrets.ParseKey(enc); err != nil || !bytes.Equal(k, bytes.Repeat([]byte{1}, 32)) {
			t.Errorf("ParseKey(%q) = %x, %v", enc, k, err)
		}
	}
	if _, err := secrets.ParseKey("not base64!"); err == nil {
		t.Error("a key that is not base64 was accepted")
	}
	var none *secrets.Sealer
	if _, err := none.Seal("row", []byte("x")); !errors.Is(err, secrets.ErrNoKey) {
		t.Errorf("a nil sealer sealed: %v", err)
	}
}

func TestSealerBindsRow(t *testing.T) {
	s, err := secrets.NewSealer(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := s.Seal("row-a", []byte("the secret"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("the secret")) {
		t.Fatal("sealed value holds the plaintext")
	}
	if got, err := s.Open("row-a", sealed); err != nil || string(got) != "the secret" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := s.Open("row-b", sealed); err == nil {
		t.Fatal("a secret moved to another row opened")
	}
	other, _ := secrets.NewSealer(bytes.Repeat([]byte{2}, 32))
	if _, err := other.Open("row-a", sealed); err == nil {
		t.Fatal("opened with another key")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := s.Open("row-a", sealed); err == nil {
		t.Fatal("a tampered secret opened")
	}
}

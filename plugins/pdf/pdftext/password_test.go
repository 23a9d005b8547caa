package pdftext

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// encryptPDF encrypts a real PDF of the corpus with pdfcpu's own writer
// (the standard security handler: RC4 or AES at the given key length) and
// a user and an owner password.
func encryptPDF(t *testing.T, plain []byte, aes bool, keyLength int) []byte {
	t.Helper()
	api.DisableConfigDir()
	conf := model.NewRC4Configuration("user-secret", "owner-secret", keyLength)
	if aes {
		conf = model.NewAESConfiguration("user-secret", "owner-secret", keyLength)
	}
	var out bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(plain), &out, conf); err != nil {
		t.Fatalf("encrypting: %v", err)
	}
	return out.Bytes()
}

// TestOpenWithPassword: an encrypted PDF (RC4-128, AES-128, AES-256) opens
// with its user or owner password and gives the text of the plain file;
// without one it is ErrEncrypted, with a wrong one ErrWrongPassword.
func TestOpenWithPassword(t *testing.T) {
	plain := testcorpus.Read(t, "pdf", "deb-camlidl-1.04.pdf")
	pd, err := Open(bytes.NewReader(plain))
	if err != nil {
		t.Fatal(err)
	}
	want, err := pd.PageText(1)
	if err != nil || len(want) < 20 {
		t.Fatalf("plain page 1: %q, %v", want, err)
	}
	for _, c := range []struct {
		name string
		aes  bool
		key  int
	}{{"RC4-128", false, 128}, {"AES-128", true, 128}, {"AES-256", true, 256}} {
		t.Run(c.name, func(t *testing.T) {
			enc := encryptPDF(t, plain, c.aes, c.key)
			if _, err := Open(bytes.NewReader(enc)); !errors.Is(err, ErrEncrypted) {
				t.Errorf("without a password: %v, want ErrEncrypted", err)
			}
			if _, err := OpenWithPassword(bytes.NewReader(enc), "guess"); !errors.Is(err, ErrWrongPassword) {
				t.Errorf("with a wrong password: %v, want ErrWrongPassword", err)
			}
			for _, pw := range []string{"user-secret", "owner-secret"} {
				d, err := OpenWithPassword(bytes.NewReader(enc), pw)
				if err != nil {
					t.Fatalf("with %s: %v", pw, err)
				}
				if got, err := d.PageText(1); err != nil || got != want {
					t.Errorf("with %s: page 1 %q, %v; want the plain file's %q", pw, got, err, want)
				}
			}
		})
	}
}

package signature_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenthost/agenthost/host/wasm/signature"
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// module is a small valid Wasm binary with a custom section to sign.
func module(t *testing.T) []byte {
	m, err := wasmbin.SetCustomSection([]byte{0, 'a', 's', 'm', 1, 0, 0, 0}, "agenthost.manifest", []byte(`{"name":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSignVerify(t *testing.T) {
	pub, priv, err := signature.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	otherPub, otherPriv, _ := signature.GenerateKey()
	trust := signature.NewTrustStore(pub)
	signed, err := signature.Sign(module(t), priv)
	if err != nil {
		t.Fatal(err)
	}
	tampered := append([]byte(nil), signed...)
	// Flip a byte of the manifest payload (the signature section comes after it).
	tampered[len(module(t))-3] ^= 0xff
	byOther, _ := signature.Sign(module(t), otherPriv)
	resigned, _ := signature.Sign(byOther, priv)

	cases := []struct {
		name string
		mod  []byte
		want error
	}{
		{"valid", signed, nil},
		{"tampered", tampered, signature.ErrBadSignature},
		{"unsigned", module(t), signature.ErrUnsigned},
		{"untrusted key", byOther, signature.ErrUntrustedKey},
		{"re-signed by a trusted key", resigned, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := trust.Verify(tc.mod)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			if tc.want == nil && id != signature.IDOf(pub) {
				t.Fatalf("key id %s, want %s", id, signature.IDOf(pub))
			}
		})
	}
	if len(resigned) != len(signed) {
		t.Fatal("re-signing kept the old signature section")
	}
	_ = otherPub
	// The host adapter marks only a missing signature as "unsigned".
	var u interface{ Unsigned() bool }
	if err := (signature.Verifier{Trust: trust}).Verify(module(t)); !errors.As(err, &u) || !u.Unsigned() {
		t.Fatalf("unsigned error not marked: %v", err)
	}
	if err := (signature.Verifier{Trust: trust}).Verify(tampered); errors.As(err, &u) {
		t.Fatalf("tampered error marked unsigned: %v", err)
	}
}

func TestKeyFiles(t *testing.T) {
	pub, priv, _ := signature.GenerateKey()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "k.pub"), signature.EncodePublic(pub), 0o644)
	os.WriteFile(filepath.Join(dir, "k.key"), signature.EncodePrivate(priv), 0o600)
	p2, err := signature.ReadPublic(filepath.Join(dir, "k.pub"))
	if err != nil || !p2.Equal(pub) {
		t.Fatalf("ReadPublic: %v", err)
	}
	k2, err := signature.ReadPrivate(filepath.Join(dir, "k.key"))
	if err != nil || !k2.Equal(priv) {
		t.Fatalf("ReadPrivate: %v", err)
	}
	if _, err := signature.ReadPublic(filepath.Join(dir, "k.key")); err == nil {
		t.Fatal("a private key file read as a public key")
	}
}

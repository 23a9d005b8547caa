// Package signature signs plugins with ed25519 and checks them against the keys
// an operator trusts. A signature lives in the plugin's custom section
// "agenthost.signature" and covers the module without that section, so signing
// never changes what it signs and a re-signed plugin replaces the old signature.
package signature

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// SectionName is the custom section that carries the signature.
const SectionName = "agenthost.signature"

// Errors of Verify; errors.Is tells them apart.
var (
	ErrUnsigned     = errors.New("plugin is not signed")
	ErrBadSignature = errors.New("plugin signature does not match its content (tampered?)")
	ErrUntrustedKey = errors.New("plugin is signed by a key the operator does not trust")
)

// KeyID names a public key: the first 16 hex digits of its SHA-256.
type KeyID string

// IDOf returns a public key's ID.
func IDOf(pub ed25519.PublicKey) KeyID {
	s := sha256.Sum256(pub)
	return KeyID(hex.EncodeToString(s[:])[:16])
}

// envelope is the section's JSON.
type envelope struct {
	KeyID     KeyID  `json:"keyId"`
	Algorithm string `json:"algorithm"`
	Signature string `json:"signature"`
}

// GenerateKey makes a new key pair.
func GenerateKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand.Reader)
}

// Sign returns a copy of module carrying priv's signature (replacing any).
func Sign(module []byte, priv ed25519.PrivateKey) ([]byte, error) {
	body, err := wasmbin.RemoveCustomSection(module, SectionName)
	if err != nil {
		return nil, err
	}
	env := envelope{
		KeyID:     IDOf(priv.Public().(ed25519.PublicKey)),
		Algorithm: "ed25519",
		Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(priv, body)),
	}
	doc, _ := json.Marshal(env)
	return wasmbin.SetCustomSection(body, SectionName, doc)
}

// Info reads a module's signature without checking it.
func Info(module []byte) (KeyID, bool, error) {
	doc, ok, err := wasmbin.CustomSection(module, SectionName)
	if err != nil || !ok {
		return "", false, err
	}
	var env envelope
	if err := json.Unmarshal(doc, &env); err != nil {
		return "", true, fmt.Errorf("%w: unreadable signature section: %v", ErrBadSignature, err)
	}
	return env.KeyID, true, nil
}

// TrustStore is the set of public keys an operator trusts.
type TrustStore struct {
	keys map[KeyID]ed25519.PublicKey
}

// NewTrustStore trusts the given keys.
func NewTrustStore(keys ...ed25519.PublicKey) *TrustStore {
	t := &TrustStore{keys: map[KeyID]ed25519.PublicKey{}}
	for _, k := range keys {
		t.keys[IDOf(k)] = k
	}
	return t
}

// Verify checks module's signature against the trusted keys and returns the
// signing key's ID.
func (t *TrustStore) Verify(module []byte) (KeyID, error) {
	doc, ok, err := wasmbin.CustomSection(module, SectionName)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrUnsigned
	}
	var env envelope
	if err := json.Unmarshal(doc, &env); err != nil || env.Algorithm != "ed25519" {
		return "", fmt.Errorf("%w: unreadable signature section", ErrBadSignature)
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signature)
	if err != nil {
		return env.KeyID, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	body, err := wasmbin.RemoveCustomSection(module, SectionName)
	if err != nil {
		return env.KeyID, err
	}
	pub, trusted := t.keys[env.KeyID]
	if !trusted {
		return env.KeyID, fmt.Errorf("%w (key %s)", ErrUntrustedKey, env.KeyID)
	}
	if !ed25519.Verify(pub, body, sig) {
		return env.KeyID, fmt.Errorf("%w (key %s)", ErrBadSignature, env.KeyID)
	}
	return env.KeyID, nil
}

// Verifier adapts a TrustStore to the plugin host, which needs only an error.
type Verifier struct{ Trust *TrustStore }

// Verify implements wasm.Verifier. An unsigned module's error says so through
// Unsigned(), so a host that allows unsigned plugins can let it pass while
// still refusing tampered ones.
func (v Verifier) Verify(module []byte) error {
	_, err := v.Trust.Verify(module)
	if errors.Is(err, ErrUnsigned) {
		return unsignedError{err}
	}
	return err
}

type unsignedError struct{ error }

func (unsignedError) Unsigned() bool  { return true }
func (u unsignedError) Unwrap() error { return u.error }

const (
	pemPublic  = "AGENTHOST PLUGIN PUBLIC KEY"
	pemPrivate = "AGENTHOST PLUGIN PRIVATE KEY"
)

// EncodePublic and EncodePrivate write keys as PEM.
func EncodePublic(k ed25519.PublicKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: pemPublic, Bytes: k})
}

// EncodePrivate writes a private key as PEM (its seed).
func EncodePrivate(k ed25519.PrivateKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: pemPrivate, Bytes: k.Seed()})
}

// ReadPublic reads a PEM public key file.
func ReadPublic(path string) (ed25519.PublicKey, error) {
	b, err := readPEM(path, pemPublic, ed25519.PublicKeySize)
	return ed25519.PublicKey(b), err
}

// ReadPrivate reads a PEM private key file.
func ReadPrivate(path string) (ed25519.PrivateKey, error) {
	b, err := readPEM(path, pemPrivate, ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(b), nil
}

func readPEM(path, typ string, size int) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(raw)
	if blk == nil || blk.Type != typ || len(blk.Bytes) != size {
		return nil, fmt.Errorf("%s: not a %s", path, typ)
	}
	return blk.Bytes, nil
}

// Package secrets seals what the host keeps for others (users' connection
// credentials, MCP servers' tokens) with AES-256-GCM under the operator's
// key (AGENTHOST_SECRET_KEY). A sealed value is bound to where it belongs
// (additional data), so one copied to another row does not open.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// ErrNoKey is returned when secrets would be stored without an encryption key.
var ErrNoKey = errors.New("no secret key configured (set AGENTHOST_SECRET_KEY to 32 random bytes, base64)")

// sealVersion prefixes every sealed secret so the format can change later.
const sealVersion byte = 1

// Sealer encrypts secrets at rest with AES-256-GCM. Each sealed value is
// bound to a context (the id of the row it belongs to), so a sealed secret
// copied into another row does not open. A nil Sealer refuses (ErrNoKey).
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer makes a sealer from a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) == 0 {
		return nil, ErrNoKey
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("secrets: the secret key must be 32 bytes, not %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// ParseKey decodes a key as configured: standard or URL base64 of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ErrNoKey
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != 32 {
				return nil, fmt.Errorf("secrets: the secret key must decode to 32 bytes, not %d", len(k))
			}
			return k, nil
		}
	}
	return nil, errors.New("secrets: the secret key is not base64")
}

// Seal encrypts plain for the context id (a row's id).
func (s *Sealer) Seal(id string, plain []byte) ([]byte, error) {
	if s == nil {
		return nil, ErrNoKey
	}
	nonce := make([]byte, s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	out := append([]byte{sealVersion}, nonce...)
	return s.aead.Seal(out, nonce, plain, []byte(id)), nil
}

// Open decrypts what Seal made for the same context id.
func (s *Sealer) Open(id string, sealed []byte) ([]byte, error) {
	if s == nil {
		return nil, ErrNoKey
	}
	n := s.aead.NonceSize()
	if len(sealed) < 1+n+s.aead.Overhead() || sealed[0] != sealVersion {
		return nil, errors.New("secrets: sealed secret is malformed")
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(id))
	if err != nil {
		return nil, errors.New("secrets: sealed secret does not open with this key (wrong key, or moved from another row)")
	}
	return plain, nil
}

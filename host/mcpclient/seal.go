package mcpclient

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrNoSecretKey says a server has secrets but the host has no key to seal
// them with (AGENTHOST_SECRET_KEY).
var ErrNoSecretKey = errors.New("no secret key configured (AGENTHOST_SECRET_KEY: 32 random bytes, base64)")

// sealVersion is the first byte of a sealed blob: AES-256-GCM, 12-byte nonce.
const sealVersion = 1

// Sealer encrypts servers' secrets at rest with AES-256-GCM. The sealed
// blob is bound to its tenant and server name, so a blob copied to another
// row does not open.
type Sealer struct {
	aead cipher.AEAD // nil: no key, only servers without secrets
}

// NewSealer returns a sealer over a base64-encoded 32-byte key; an empty key
// gives a sealer that refuses secrets (ErrNoSecretKey).
func NewSealer(key string) (*Sealer, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return &Sealer{}, nil
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("mcpclient: the secret key must be 32 bytes, base64-encoded (openssl rand -base64 32)")
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: secret key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

func sealContext(tenantID, name string) []byte {
	return []byte("agenthost mcp server\x00" + tenantID + "\x00" + name)
}

// Seal encrypts a server's secrets; no secrets seal to nil.
func (s *Sealer) Seal(tenantID, name string, sec Secrets) ([]byte, error) {
	if len(sec.Env) == 0 && len(sec.Headers) == 0 {
		return nil, nil
	}
	if s == nil || s.aead == nil {
		return nil, ErrNoSecretKey
	}
	plain, err := json.Marshal(sec)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return s.aead.Seal(out, out[1:], plain, sealContext(tenantID, name)), nil
}

// Open decrypts what Seal sealed for the same tenant and name.
func (s *Sealer) Open(tenantID, name string, sealed []byte) (Secrets, error) {
	var sec Secrets
	if len(sealed) == 0 {
		return sec, nil
	}
	if s == nil || s.aead == nil {
		return sec, ErrNoSecretKey
	}
	n := s.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return sec, errors.New("mcpclient: sealed secrets: unknown format")
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], sealContext(tenantID, name))
	if err != nil {
		return sec, errors.New("mcpclient: sealed secrets do not open with this key (was the key changed?)")
	}
	if err := json.Unmarshal(plain, &sec); err != nil {
		return sec, fmt.Errorf("mcpclient: sealed secrets: %w", err)
	}
	return sec, nil
}

package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
	"github.com/agenthost/agenthost/host/secrets"
)

// ErrNoSecretKey says a server has secrets but the host has no key to seal
// them with (AGENTHOST_SECRET_KEY).
var ErrNoSecretKey = secrets.ErrNoKey

// Sealer seals servers' secrets at rest (host/secrets), each blob bound to
// its tenant and server name, so a blob copied to another row does not open.
type Sealer struct {
	s *secrets.Sealer // nil: no key, only servers without secrets
}

// NewSealer returns a sealer over a base64-encoded 32-byte key; an empty key
// gives a sealer that refuses secrets (ErrNoSecretKey).
func NewSealer(key string) (*Sealer, error) {
	if strings.TrimSpace(key) == "" {
		return &Sealer{}, nil
	}
	raw, err := secrets.ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: %w (openssl rand -base64 32)", err)
	}
	s, err := secrets.NewSealer(raw)
	if err != nil {
		return nil, fmt.Errorf("mcpclient: %w", err)
	}
	return &Sealer{s: s}, nil
}

func sealContext(tenantID, name string) string {
	return "agenthost mcp server\x00" + tenantID + "\x00" + name
}

// Seal encrypts a server's secrets; no secrets seal to nil.
func (s *Sealer) Seal(tenantID, name string, sec mcpconfig.Secrets) ([]byte, error) {
	if len(sec.Env) == 0 && len(sec.Headers) == 0 {
		return nil, nil
	}
	if s == nil || s.s == nil {
		return nil, ErrNoSecretKey
	}
	plain, err := json.Marshal(sec)
	if err != nil {
		return nil, err
	}
	return s.s.Seal(sealContext(tenantID, name), plain)
}

// Open decrypts what Seal sealed for the same tenant and name.
func (s *Sealer) Open(tenantID, name string, sealed []byte) (mcpconfig.Secrets, error) {
	var sec mcpconfig.Secrets
	if len(sealed) == 0 {
		return sec, nil
	}
	if s == nil || s.s == nil {
		return sec, ErrNoSecretKey
	}
	plain, err := s.s.Open(sealContext(tenantID, name), sealed)
	if err != nil {
		return sec, fmt.Errorf("mcpclient: sealed secrets: %w", err)
	}
	if err := json.Unmarshal(plain, &sec); err != nil {
		return sec, fmt.Errorf("mcpclient: sealed secrets: %w", err)
	}
	return sec, nil
}

package tenancy

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// TokenPrefix starts every API token, so leaked tokens are easy to scan for.
const TokenPrefix = "ahk_"

// Token is an API token's record. The secret is shown once, at creation; the
// store keeps only its SHA-256 (the secret has 256 random bits, so a fast
// hash is as safe as a slow one and costs nothing per request).
type Token struct {
	ID        string     `json:"id"`
	UserID    string     `json:"userId"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
}

// NewTokenSecret returns a fresh random token secret.
func NewTokenSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("tenancy: no randomness: %v", err)) // crypto/rand never fails on supported systems
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// HashToken is what the store keeps of a secret. A secret without the prefix
// or of the wrong length is ErrUnauthenticated.
func HashToken(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, TokenPrefix)
	if !ok || len(raw) != 43 {
		return nil, fmt.Errorf("%w: malformed API token", ErrUnauthenticated)
	}
	h := sha256.Sum256([]byte(secret))
	return h[:], nil
}

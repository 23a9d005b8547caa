package mcpclient_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpclient/mcpconfig"
)

func testKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func TestSealer(t *testing.T) {
	s, err := mcpclient.NewSealer(testKey(t))
	if err != nil {
		t.Fatal(err)
	}
	sec := mcpconfig.Secrets{Headers: map[string]string{"Authorization": "Bearer tok-123"}}
	sealed, err := s.Seal("t1", "jira", sec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "tok-123") {
		t.Fatal("the sealed blob carries the token in the clear")
	}
	got, err := s.Open("t1", "jira", sealed)
	if err != nil || got.Headers["Authorization"] != "Bearer tok-123" {
		t.Fatalf("open: %+v %v", got, err)
	}
	// Bound to its tenant and name, and to the key.
	if _, err := s.Open("t2", "jira", sealed); err == nil {
		t.Fatal("another tenant's row opened the blob")
	}
	if _, err := s.Open("t1", "other", sealed); err == nil {
		t.Fatal("another server's row opened the blob")
	}
	other, _ := mcpclient.NewSealer(testKey(t))
	if _, err := other.Open("t1", "jira", sealed); err == nil || !strings.Contains(err.Error(), "key") {
		t.Fatalf("another key: %v", err)
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := s.Open("t1", "jira", sealed); err == nil {
		t.Fatal("a tampered blob opened")
	}
	// Without a key, secrets are refused, and servers without them are fine.
	none, err := mcpclient.NewSealer("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.Seal("t1", "jira", sec); !errors.Is(err, mcpclient.ErrNoSecretKey) {
		t.Fatalf("seal without a key: %v", err)
	}
	if b, err := none.Seal("t1", "jira", mcpconfig.Secrets{}); err != nil || b != nil {
		t.Fatalf("no secrets: %v %v", b, err)
	}
	for _, bad := range []string{"short", base64.StdEncoding.EncodeToString(make([]byte, 16)), "!!!"} {
		if _, err := mcpclient.NewSealer(bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}

package connections_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
)

// TestProviders: each configured provider with the kinds of connection it
// takes, and nothing of the operator's OAuth client in what users see.
func TestProviders(t *testing.T) {
	e := newEnv(t)
	got := e.svc.Providers()
	want := []connections.ProviderInfo{
		{Name: "acme", Auth: []string{"oauth2", "token", "basic"}},
		{Name: "jira", Auth: []string{"token", "basic"}, NeedsBaseURL: true},
		{Name: "other", Auth: []string{"token", "basic"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Providers() = %+v; want %+v", got, want)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"client-1", "client-secret-1", e.as.AuthURL(), e.as.TokenURL(), redirect, "read"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the providers' listing %s holds %q", b, secret)
		}
	}
}

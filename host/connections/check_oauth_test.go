package connections_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/google"
)

// TestOAuthConnectionsCheckedWhenMade (issue 29, item 7): a Microsoft or
// Google connection is tried as soon as the authorisation completes, as
// a Jira one is: Graph's GET /me, Drive's GET about?fields=user. One that
// answers is checked, with the time; a Google one whose Cloud project has
// not enabled the Drive API (403 accessNotConfigured) is kept but failed,
// its last error naming the request and the status, never the token.
func TestOAuthConnectionsCheckedWhenMade(t *testing.T) {
	e := newEnv(t)
	m := newMSWorld(t, e.db)
	ms := m.connect(t, e.alice, "work")
	if ms.Status != connections.StatusChecked || ms.LastError != "" || ms.CheckedAt.IsZero() {
		t.Fatalf("a working Microsoft connection: %q %q %v", ms.Status, ms.LastError, ms.CheckedAt)
	}
	tried := false
	for _, r := range m.graph.Requests() {
		tried = tried || (r.Method == "GET" && r.Path == "/v1.0/me")
	}
	if !tried {
		t.Fatal("the Microsoft connection was not tried against Graph's /me")
	}

	g := google.New(e.as.Valid, "alice@acme.example")
	t.Cleanup(g.Close)
	u, _ := url.Parse(g.URL)
	port := u.Port()
	dns := connectionstest.DNS{"www.googleapis.com": "127.0.0.1", "gmail.googleapis.com": "127.0.0.1"}
	hosts := []string{"www.googleapis.com:" + port, "gmail.googleapis.com:" + port}
	gsvc, err := connections.New(connections.Options{Check: connections.CheckOptions{AllowPrivateHosts: hosts, Resolver: dns}, Store: e.db,
		Sealer: connectionstest.Sealer(t), Providers: []connections.Provider{googleProvider(e.as, port, "http://www.googleapis.com:"+port)},
		TokenClient: e.as.Client(), Now: e.clock.Now, Sleep: e.clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	gc := connectGoogle(t, gsvc, e.as, e.alice)
	if gc.Status != connections.StatusChecked || gc.LastError != "" || gc.CheckedAt.IsZero() {
		t.Fatalf("a working Google connection: %q %q %v", gc.Status, gc.LastError, gc.CheckedAt)
	}
	g.DisableDrive()
	authURL, err := gsvc.StartAuthorization(t.Context(), e.alice, "google", "no drive api")
	if err != nil {
		t.Fatal(err)
	}
	off, err := gsvc.CompleteAuthorization(t.Context(), e.alice, mustQuery(t, authURL).Get("state"), e.as.Consent(authURL))
	if err != nil {
		t.Fatalf("a connection whose check fails is kept: %v", err)
	}
	if off.Status != connections.StatusFailed || !strings.Contains(off.LastError, "403") || !strings.Contains(off.LastError, "/drive/v3/about") {
		t.Fatalf("a Google connection whose project has no Drive API: %q %q", off.Status, off.LastError)
	}
	for _, tok := range e.as.Issued() {
		if strings.Contains(off.LastError, tok) {
			t.Fatal("the last error carries a token")
		}
	}
	// Listed with the outcome, as the connections page shows it.
	list, err := gsvc.List(t.Context(), e.alice)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range list {
		if c.ID == off.ID {
			found = c.Status == connections.StatusFailed && c.LastError == off.LastError
		}
	}
	if !found {
		t.Fatalf("the failed connection is not listed with its error: %+v", list)
	}
}

package oauthserver

import (
	"context"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/store"
)

// docs serves client ID metadata documents over TLS. Its certificate
// (httptest's, for example.com) is made a trusted root of this process
// before anything verifies one (SSL_CERT_FILE is read once), as an
// operator's own CA would be.
var (
	docs     *httptest.Server
	docBody  atomic.Value // string
	docHits  atomic.Int64
	docsHost string // example.com:PORT
)

func TestMain(m *testing.M) {
	docs = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		docHits.Add(1)
		switch r.URL.Path {
		case "/redirect.json":
			http.Redirect(w, r, "/client.json", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, strings.ReplaceAll(docBody.Load().(string), "HOST", docsHost))
		}
	}))
	docs.StartTLS()
	_, port, _ := net.SplitHostPort(docs.Listener.Addr().String())
	docsHost = "example.com:" + port
	dir, _ := os.MkdirTemp("", "oauthserver-ca")
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: docs.Certificate().Raw}), 0o600)
	os.Setenv("SSL_CERT_FILE", ca)
	code := m.Run()
	docs.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// loopbackDNS resolves every name to the loopback address, where docs is.
type loopbackDNS struct{}

func (loopbackDNS) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.ParseIP("127.0.0.1")}}, nil
}

func newTestServer(t *testing.T, privateOK bool) *fiber.App {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// As serve builds it, but for the test's resolver; privateOK lets the
	// one test host resolve to loopback (as an operator may allow an
	// on-premises host), else the guard refuses it as it refuses any
	// private address.
	pol := egress.NewPolicy().WithAllowedHosts("*").WithMethods("GET").WithMaxResponseBytes(maxDocument).WithMaxRedirects(0).WithResolver(loopbackDNS{})
	if privateOK {
		pol = pol.WithPrivateHostsAllowed(docsHost)
	}
	s := New(Config{Issuer: "http://127.0.0.1"}, Deps{Store: db, Documents: egress.NewClient(pol)})
	app := fiber.New()
	s.Routes(app)
	return app
}

func authorizeStatus(t *testing.T, app *fiber.App, clientID string) (int, string) {
	t.Helper()
	q := url.Values{"client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:5000/cb"}, "response_type": {"code"},
		"code_challenge": {strings.Repeat("a", 43)}, "code_challenge_method": {"S256"}}
	resp, err := app.Test(httptest.NewRequest("GET", AuthorizePath+"?"+q.Encode(), nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestClientIDMetadataDocuments: a document is fetched through the egress
// guard, checked (it names itself, no secret, no client authentication,
// redirect URIs as for registration, size), cached, and never fetched
// from a private address the operator did not allow or through a redirect.
func TestClientIDMetadataDocuments(t *testing.T) {
	app := newTestServer(t, true)
	id := "https://" + docsHost + "/client.json"
	good := `{"client_id":"https://HOST/client.json","client_name":"Doc IDE","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none"}`
	for _, c := range []struct {
		name, doc, id, want string
		status              int
	}{
		{"another client_id", strings.Replace(good, "/client.json", "/other.json", 1), id, "is not its URL", 400},
		{"a secret", strings.Replace(good, `"none"`, `"none","client_secret":"s"`, 1), id, "public clients", 400},
		{"client authentication", strings.Replace(good, `"none"`, `"private_key_jwt"`, 1), id, "public clients", 400},
		{"a bad redirect URI", strings.Replace(good, "http://127.0.0.1/cb", "javascript:alert(1)", 1), id, "not allowed", 400},
		{"too large", strings.Replace(good, "Doc IDE", strings.Repeat("x", maxDocument), 1), id, "could not be fetched", 400},
		{"not JSON", "<html>", id, "not JSON", 400},
		{"through a redirect", good, "https://" + docsHost + "/redirect.json", "could not be fetched", 400},
		{"http", good, "http://" + docsHost + "/client.json", "unknown client_id", 400},
		{"no path", good, "https://" + docsHost, "with a path", 400},
	} {
		docBody.Store(c.doc)
		if st, body := authorizeStatus(t, app, c.id); st != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s", c.name, st, body)
		}
	}
	docBody.Store(good)
	before := docHits.Load()
	st, body := authorizeStatus(t, app, id)
	if st != 200 || !strings.Contains(body, "Sign in to continue") {
		t.Fatalf("a good document: %d %s", st, body)
	}
	// Cached: the next request does not fetch it again.
	if st, _ := authorizeStatus(t, app, id); st != 200 || docHits.Load() != before+1 {
		t.Fatalf("not cached: %d, %d fetches", st, docHits.Load()-before)
	}
	// A redirect URI the document does not list is shown, never followed.
	q := url.Values{"client_id": {id}, "redirect_uri": {"https://evil.example/cb"}, "response_type": {"code"},
		"code_challenge": {strings.Repeat("a", 43)}, "code_challenge_method": {"S256"}}
	resp, _ := app.Test(httptest.NewRequest("GET", AuthorizePath+"?"+q.Encode(), nil), -1)
	if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
		t.Fatalf("foreign redirect URI: %d %v", resp.StatusCode, resp.Header)
	}

	// Without the operator's allowance the guard refuses the private address.
	strict := newTestServer(t, false)
	if st, body := authorizeStatus(t, strict, id); st != 400 || !strings.Contains(body, "could not be fetched") {
		t.Fatalf("a document at a private address: %d %s", st, body)
	}
}

// TestCORS: browser-based clients of listed origins get the preflights
// and responses of the metadata, token, registration and revocation
// endpoints; other origins get no CORS header.
func TestCORS(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	New(Config{Issuer: "http://127.0.0.1", Origins: []string{"https://ide.example/"}}, Deps{Store: db}).Routes(app)
	for _, path := range []string{MetadataPath, TokenPath, RegistrationPath, RevocationPath} {
		for _, c := range []struct {
			origin, want string
		}{{"https://ide.example", "https://ide.example"}, {"https://evil.example", ""}} {
			req := httptest.NewRequest("OPTIONS", path, nil)
			req.Header.Set("Origin", c.origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			resp, err := app.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != c.want || (c.want != "" && resp.Header.Get("Access-Control-Allow-Methods") == "") {
				t.Errorf("preflight of %s from %s: %d %v", path, c.origin, resp.StatusCode, resp.Header)
			}
		}
	}
	req := httptest.NewRequest("GET", MetadataPath, nil)
	req.Header.Set("Origin", "https://ide.example")
	resp, _ := app.Test(req, -1)
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://ide.example" {
		t.Errorf("metadata from a listed origin: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestRedirectURIs(t *testing.T) {
	for _, c := range []struct {
		uri string
		ok  bool
	}{
		{"https://ide.example/cb", true}, {"http://127.0.0.1/cb", true}, {"http://[::1]:8080/cb", true}, {"http://localhost/cb", true},
		{"com.example.app:/oauth", true}, {"http://ide.example/cb", false}, {"javascript:alert(1)", false}, {"data:text/html,x", false},
		{"file:///etc/passwd", false}, {"https://ide.example/cb#x", false}, {"https://u:p@ide.example/cb", false}, {"/relative", false},
		{"https://" + strings.Repeat("a", maxURI), false},
	} {
		if err := checkRedirectURI(c.uri); (err == nil) != c.ok {
			t.Errorf("checkRedirectURI(%q): %v", c.uri, err)
		}
	}
	reg := []string{"http://127.0.0.1/callback", "https://ide.example/cb"}
	for _, c := range []struct {
		got string
		ok  bool
	}{
		{"http://127.0.0.1/callback", true}, {"http://127.0.0.1:43117/callback", true}, {"https://ide.example/cb", true},
		{"http://127.0.0.1:43117/other", false}, {"http://localhost:43117/callback", false}, {"https://ide.example:8443/cb", false},
		{"https://ide.example/cb?x=1", false}, {"http://127.0.0.1:1/callback?x=1", false},
	} {
		if redirectMatches(reg, c.got) != c.ok {
			t.Errorf("redirectMatches(%q) = %v", c.got, !c.ok)
		}
	}
}

func TestPKCE(t *testing.T) {
	// RFC 7636 appendix B.
	v, ch := "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	for _, c := range []struct {
		v  string
		ok bool
	}{{v, true}, {v + "x", false}, {v[:42], false}, {strings.Repeat("a", 129), false}} {
		if verifierMatches(c.v, ch) != c.ok {
			t.Errorf("verifier %q: %v", c.v, !c.ok)
		}
	}
}

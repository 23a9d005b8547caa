package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/signin/oidctest"
)

// oauthServe is serve with a sign-in provider (the real OpenID provider
// of host/signin/oidctest) and the MCP endpoint, for the MCP clients'
// authorization server.
type oauthServe struct {
	base, mcpBase, ws, token string
	idp                      *oidctest.OP
	logs                     *syncBuffer
}

func (s oauthServe) resource() string { return s.mcpBase + "/api/v1/workspaces/" + s.ws + "/mcp" }

func startOAuthServe(t *testing.T, extra ...string) oauthServe {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	out, _, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	ws := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out)
	tok := regexp.MustCompile(`ahk_[A-Za-z0-9_-]+`).FindString(out)
	if ws == nil || tok == "" {
		t.Fatalf("bootstrap printed %s", out)
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	mcpAddr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr
	idp := oidctest.New(t, []oidctest.User{{ID: "u-ada", Username: "ada", Password: "correct horse", Email: "ada@acme.example",
		EmailVerified: true, FirstName: "Ada", LastName: "Admin"}},
		[]oidctest.Client{{ID: "agenthost", Secret: "idp-client-secret", RedirectURIs: []string{base + "/auth/oidc/idp/callback"}}})
	cfg := filepath.Join(t.TempDir(), "agenthost.yaml")
	if err := os.WriteFile(cfg, []byte(`signIn:
  publicURL: `+base+`
  providers:
    - name: idp
      label: Test IdP
      issuer: `+idp.Issuer+`
      clientID: agenthost
      clientSecretEnv: AGENTHOST_TEST_IDP_SECRET
      tenant: Acme
      allowedDomains: [acme.example]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTHOST_TEST_IDP_SECRET", "idp-client-secret")
	logs := &syncBuffer{}
	serveInProcess(t, logs, append([]string{"-data", data, "-addr", addr, "-mcp-addr", mcpAddr, "-config", cfg}, extra...)...)
	return oauthServe{base: base, mcpBase: "http://" + mcpAddr, ws: ws[1], token: tok, idp: idp, logs: logs}
}

// person is a browser: a cookie jar that follows redirects, except to the
// MCP client's redirect URI (path /callback, the client's own listener),
// where it stops.
type person struct {
	t  *testing.T
	hc *http.Client
}

func newPerson(t *testing.T) *person {
	jar, _ := cookiejar.New(nil)
	return &person{t: t, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if r.URL.Path == "/callback" {
			return http.ErrUseLastResponse
		}
		return nil
	}}}
}

func (p *person) page(resp *http.Response, err error) (*http.Response, string) {
	p.t.Helper()
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

var (
	hrefRe   = regexp.MustCompile(`href="([^"]+)"`)
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
	optionRe = regexp.MustCompile(`<option value="([^"]+)"`)
	refreshR = regexp.MustCompile(`url=([^"]+)"`)
)

// authorize follows an authorization URL as a person would: signs in at
// the provider if the server asks, consents (with write if asked), and
// returns where the server sent the browser back (the redirect URI with
// the code, or an error).
func (p *person) authorize(s oauthServe, authURL string, write bool) *url.URL {
	p.t.Helper()
	resp, body := p.page(p.hc.Get(authURL))
	if strings.Contains(body, "Sign in to continue") {
		var start string
		for _, m := range hrefRe.FindAllStringSubmatch(body, -1) {
			if h := html.UnescapeString(m[1]); strings.HasPrefix(h, "/auth/oidc/idp?return=") {
				start = h
			}
		}
		if start == "" {
			p.t.Fatalf("the sign-in page offers no provider:\n%s", body)
		}
		lr, login := p.page(p.hc.Get(s.base + start))
		id := regexp.MustCompile(`name="authRequestID" value="([^"]+)"`).FindStringSubmatch(login)
		if id == nil {
			p.t.Fatalf("no login form at the provider (%d %s %v):\n%s", lr.StatusCode, lr.Request.URL, lr.Header, login)
		}
		_, signedIn := p.page(p.hc.PostForm(s.idp.Issuer+"/login", url.Values{"authRequestID": {html.UnescapeString(id[1])},
			"username": {"ada"}, "password": {"correct horse"}}))
		next := refreshR.FindStringSubmatch(signedIn)
		if next == nil || !strings.HasPrefix(html.UnescapeString(next[1]), "/oauth/authorize?") {
			p.t.Fatalf("the sign-in did not return to the authorization request:\n%s", signedIn)
		}
		resp, body = p.page(p.hc.Get(s.base + html.UnescapeString(next[1])))
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		u, _ := url.Parse(resp.Header.Get("Location"))
		return u
	}
	if !strings.Contains(body, `name="decision" value="allow"`) {
		p.t.Fatalf("no consent page (%d):\n%s", resp.StatusCode, body)
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		p.t.Errorf("the consent page may be framed: %v", resp.Header)
	}
	form := url.Values{"decision": {"allow"}}
	for _, m := range hiddenRe.FindAllStringSubmatch(body, -1) {
		form.Add(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	ws := optionRe.FindStringSubmatch(body)
	if ws == nil {
		p.t.Fatalf("no workspace to choose:\n%s", body)
	}
	form.Set("workspace", html.UnescapeString(ws[1]))
	if write {
		form.Set("write", "1")
	}
	resp, body = p.page(p.hc.PostForm(s.base+"/oauth/authorize", form))
	if resp.StatusCode != http.StatusSeeOther {
		p.t.Fatalf("consent answered %d:\n%s", resp.StatusCode, body)
	}
	u, _ := url.Parse(resp.Header.Get("Location"))
	return u
}

func pkce() (verifier, challenge string) {
	verifier = base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("verifier-%d-0123456789abcdef", time.Now().UnixNano())))
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func postForm(t *testing.T, u string, v url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(u, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestMCPOAuthSignIn is the whole sign-in of an MCP client through a real
// serve, with the real OpenID provider in the loop: discovery from the
// endpoint's 401, registration (RFC 7591), the authorization request with
// PKCE and the resource, the person's sign-in at the provider and consent,
// the code exchange, MCP calls with the access token (only in its
// workspace, only read-only tools without mcp:write, never at the API),
// refresh rotation and reuse detection, revocation (RFC 7009) and the
// person's list of clients where they revoke one.
func TestMCPOAuthSignIn(t *testing.T) {
	s := startOAuthServe(t)
	ctx := context.Background()

	// Discovery: 401 → protected-resource metadata → authorization server.
	resp, err := http.Post(s.resource(), "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	meta := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(resp.Header.Get("WWW-Authenticate"))
	if resp.StatusCode != 401 || meta == nil {
		t.Fatalf("unauthenticated: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	var prm struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		Scopes               []string `json:"scopes_supported"`
	}
	getJSON(t, meta[1], &prm)
	if prm.Resource != s.resource() || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != s.base {
		t.Fatalf("protected-resource metadata: %+v", prm)
	}
	var asm map[string]any
	getJSON(t, s.base+"/.well-known/oauth-authorization-server", &asm)
	if asm["issuer"] != s.base || asm["registration_endpoint"] != s.base+"/oauth/register" || asm["client_id_metadata_document_supported"] != true ||
		fmt.Sprint(asm["code_challenge_methods_supported"]) != "[S256]" || asm["jwks_uri"] != nil {
		t.Fatalf("authorization server metadata: %v", asm)
	}

	// Registration, with its refusals.
	redirect := "http://127.0.0.1/callback"
	reg := func(body string) (int, map[string]any) {
		resp, err := http.Post(s.base+"/oauth/register", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	for _, bad := range []string{`{"redirect_uris":["javascript:alert(1)"]}`, `{"redirect_uris":["http://evil.example/cb"]}`,
		`{"redirect_uris":[]}`, `{"redirect_uris":["https://ok.example/cb#frag"]}`, `not json`} {
		if code, out := reg(bad); code != 400 {
			t.Errorf("registration %s: %d %v", bad, code, out)
		}
	}
	code, cl := reg(`{"client_name":"Test IDE","redirect_uris":["` + redirect + `"],"token_endpoint_auth_method":"client_secret_basic"}`)
	clientID, _ := cl["client_id"].(string)
	if code != 201 || clientID == "" || cl["client_secret"] != nil || cl["token_endpoint_auth_method"] != "none" {
		t.Fatalf("registration: %d %v", code, cl)
	}

	// The authorization request; an unknown redirect URI is shown, never followed.
	verifier, challenge := pkce()
	authURL := func(redirectURI, scope string) string {
		return s.base + "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {"st-1"}, "resource": {s.resource()}, "scope": {scope}}.Encode()
	}
	p := newPerson(t)
	if resp, body := p.page(p.hc.Get(authURL("https://evil.example/cb", "mcp:read"))); resp.StatusCode != 400 || !strings.Contains(body, "not one the client") {
		t.Fatalf("foreign redirect URI: %d %s", resp.StatusCode, body)
	}
	// A loopback redirect URI may name any port (RFC 8252).
	back := p.authorize(s, authURL("http://127.0.0.1:43117/callback", "mcp:read"), false)
	q := back.Query()
	if back.Host != "127.0.0.1:43117" || q.Get("code") == "" || q.Get("state") != "st-1" || q.Get("iss") != s.base {
		t.Fatalf("authorization response: %s", back)
	}
	tokenURL := s.base + "/oauth/token"
	exchange := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {"http://127.0.0.1:43117/callback"},
		"client_id": {clientID}, "code_verifier": {verifier}, "resource": {s.resource()}}
	wrong := url.Values{}
	for k, v := range exchange {
		wrong[k] = v
	}
	wrong.Set("code_verifier", verifier+"x")
	if st, out := postForm(t, tokenURL, wrong); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("wrong verifier: %d %v", st, out)
	}
	// The wrong verifier spent the code: authorise again.
	back = p.authorize(s, authURL("http://127.0.0.1:43117/callback", "mcp:read"), false)
	exchange.Set("code", back.Query().Get("code"))
	st, tok := postForm(t, tokenURL, exchange)
	access, _ := tok["access_token"].(string)
	refresh, _ := tok["refresh_token"].(string)
	if st != 200 || access == "" || refresh == "" || tok["token_type"] != "Bearer" || tok["scope"] != "mcp:read" {
		t.Fatalf("token: %d %v", st, tok)
	}
	if st, out := postForm(t, tokenURL, exchange); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("code used twice: %d %v", st, out)
	}
	// The second use revoked what the first got (OAuth 2.1 section 4.1.3).
	if code := mcpStatus(t, s.resource(), access); code != 401 {
		t.Fatalf("access token after its code's reuse: %d", code)
	}

	// Again, granted mcp:write this time.
	verifier, challenge = pkce()
	back = p.authorize(s, authURL(redirect, "mcp:read mcp:write"), true)
	st, tok = postForm(t, tokenURL, url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {redirect},
		"client_id": {clientID}, "code_verifier": {verifier}})
	access, _ = tok["access_token"].(string)
	refresh, _ = tok["refresh_token"].(string)
	if st != 200 || tok["scope"] != "mcp:read mcp:write" {
		t.Fatalf("token with write: %d %v", st, tok)
	}
	// The MCP endpoint: the tools, as the person.
	session := mcpSession(t, ctx, s.resource(), access)
	tools, err := session.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list with the access token: %v %v", tools, err)
	}
	session.Close()
	// Not at another workspace's endpoint, not at the API.
	if code := mcpStatus(t, s.mcpBase+"/api/v1/workspaces/other/mcp", access); code != 401 {
		t.Fatalf("the token at another workspace: %d", code)
	}
	req, _ := http.NewRequest("GET", s.base+"/api/v1/workspaces", nil)
	req.Header.Set("Authorization", "Bearer "+access)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("the access token at the API: %v %v", resp.StatusCode, err)
	}

	// Refresh rotates; the old refresh token again revokes the grant.
	st, tok2 := postForm(t, tokenURL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
	access2, _ := tok2["access_token"].(string)
	if st != 200 || access2 == "" || tok2["refresh_token"] == refresh {
		t.Fatalf("refresh: %d %v", st, tok2)
	}
	if code := mcpStatus(t, s.resource(), access2); code != 200 {
		t.Fatalf("refreshed token: %d", code)
	}
	if st, out := postForm(t, tokenURL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}}); st != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("reused refresh token: %d %v", st, out)
	}
	if code := mcpStatus(t, s.resource(), access2); code != 401 {
		t.Fatalf("token after refresh-token reuse: %d", code)
	}

	// Revocation by the client (RFC 7009).
	verifier, challenge = pkce()
	back = p.authorize(s, authURL(redirect, "mcp:read"), false)
	_, tok = postForm(t, tokenURL, url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {redirect},
		"client_id": {clientID}, "code_verifier": {verifier}})
	if st, _ := postForm(t, s.base+"/oauth/revoke", url.Values{"token": {tok["refresh_token"].(string)}, "client_id": {clientID}}); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	if code := mcpStatus(t, s.resource(), tok["access_token"].(string)); code != 401 {
		t.Fatalf("token after revocation: %d", code)
	}

	// The person's list of clients, where they revoke one.
	verifier, challenge = pkce()
	back = p.authorize(s, authURL(redirect, "mcp:read"), false)
	_, tok = postForm(t, tokenURL, url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {redirect},
		"client_id": {clientID}, "code_verifier": {verifier}})
	var list []struct {
		ID, ClientName, WorkspaceID string
		Scopes                      []string
	}
	apiJSON(t, "GET", s.base+"/api/v1/me/mcp-clients", s.token, &list)
	if len(list) != 1 || list[0].ClientName != "Test IDE" || list[0].WorkspaceID != s.ws {
		t.Fatalf("the person's MCP clients: %+v", list)
	}
	if code := apiJSON(t, "DELETE", s.base+"/api/v1/me/mcp-clients/"+list[0].ID, s.token, nil); code != 204 {
		t.Fatalf("revoke from the settings: %d", code)
	}
	if code := mcpStatus(t, s.resource(), tok["access_token"].(string)); code != 401 {
		t.Fatalf("token after the person revoked it: %d", code)
	}
	var entries struct {
		Entries []struct{ Action string }
	}
	apiJSON(t, "GET", s.base+"/api/v1/audit?action=mcp_client.authorized", s.token, &entries)
	if len(entries.Entries) == 0 {
		t.Errorf("no audit entry of the authorisations")
	}
	if strings.Contains(s.logs.String(), access) || strings.Contains(s.logs.String(), refresh) {
		t.Fatal("a token is in the log")
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func apiJSON(t *testing.T, method, u, token string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(method, u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %d %s", method, u, resp.StatusCode, b)
		}
	}
	return resp.StatusCode
}

// mcpStatus is the status of an initialize with the token.
func mcpStatus(t *testing.T, endpoint, token string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func mcpSession(t *testing.T, ctx context.Context, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatalf("connect with the access token: %v", err)
	}
	return cs
}

// TestMCPOAuthTypeScriptClient signs the official TypeScript SDK's client
// in with the SDK's own OAuth provider machinery (client/auth: discovery,
// dynamic registration, PKCE, the resource, the refresh grant); the
// person's part (sign-in at the real OpenID provider, consent) is
// person.authorize, following the authorization URL the SDK asks to open.
func TestMCPOAuthTypeScriptClient(t *testing.T) {
	node := needMCPNode(t)
	s := startOAuthServe(t)
	dir, _ := filepath.Abs(mcpNode)
	script, _ := filepath.Abs("../../host/mcpserver/testdata/node/tsoauth.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, s.resource())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := newPerson(t)
	var out []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		out = append(out, line)
		if u, ok := strings.CutPrefix(line, "AUTHORIZE "); ok {
			back := p.authorize(s, u, false)
			fmt.Fprintln(stdin, back.String())
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tsoauth: %v\n%s\n%s\nserve log:\n%s", err, strings.Join(out, "\n"), stderr.String(), tail(s.logs.String(), 30))
	}
	all := strings.Join(out, "\n")
	for _, w := range []string{`{"registered":"ahcl_`, `"scope":"mcp:read"`, `"refresh":true`, `{"refreshed":"AUTHORIZED","rotated":true}`, `"afterRefresh":`} {
		if !strings.Contains(all, w) {
			t.Errorf("output lacks %q:\n%s", w, all)
		}
	}
	if m := regexp.MustCompile(`\{"tools":(\d+)\}`).FindStringSubmatch(all); m == nil || m[1] == "0" {
		t.Errorf("no tools listed:\n%s", all)
	}
	t.Logf("tsoauth:\n%s", all)
}

// TestMCPAuthorizationConformance runs the MCP conformance suite's
// authorization-server scenarios (0.2.0-alpha.12, requirements
// 2026-07-28; 0.1.16 has none) against serve's authorization server: the
// metadata endpoint and the authorization code grant, whose browser part
// (the person's sign-in at the real OpenID provider and consent) is
// person.authorize following the URL the suite prints, then delivering
// the redirect to the suite's callback listener. Every scenario must pass.
func TestMCPAuthorizationConformance(t *testing.T) {
	node := needMCPNode(t)
	s := startOAuthServe(t)
	dir, _ := filepath.Abs(mcpNode)
	resp, err := http.Post(s.base+"/oauth/register", "application/json",
		strings.NewReader(`{"client_name":"MCP conformance","redirect_uris":["http://127.0.0.1/callback"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var cl struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&cl)
	resp.Body.Close()
	port, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	port = port[strings.LastIndexByte(port, ':')+1:]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	results := t.TempDir()
	cmd := exec.CommandContext(ctx, node, "node_modules/conformance-alpha/dist/index.js", "authorization", "--url", s.base,
		"--client-id", cl.ClientID, "--resource", s.resource(), "--port", port, "--spec-version", "2026-07-28", "-o", results)
	cmd.Dir = dir
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := newPerson(t)
	var out []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		out = append(out, line)
		if strings.HasPrefix(line, s.base+"/oauth/authorize?") {
			back := p.authorize(s, line, false)
			// The browser arrives at the suite's callback listener, which
			// the suite starts after printing the URL.
			go func() {
				for range 100 {
					if resp, err := http.Get(back.String()); err == nil {
						resp.Body.Close()
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
		}
	}
	err = cmd.Wait()
	all := strings.Join(out, "\n")
	if err != nil {
		t.Fatalf("conformance authorization: %v\n%s\nserve log:\n%s", err, stderr.String(), tail(s.logs.String(), 30))
	}
	m := regexp.MustCompile(`Total: (\d+) passed, (\d+) failed`).FindStringSubmatch(all)
	if m == nil || m[1] == "0" || m[2] != "0" {
		t.Fatalf("conformance authorization: %v\n%s", m, all)
	}
	t.Logf("conformance 0.2.0-alpha.12 authorization server (2026-07-28): %s; scored scenarios failing: 0", m[0])
}

package api_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/webui"
)

// sessionClient is a browser: it keeps the session cookie and, like the
// UI's page, sends the CSRF token and its Origin on unsafe requests.
type sessionClient struct {
	t      *testing.T
	origin string
	cookie *http.Cookie
	csrf   string
}

func (s *sessionClient) do(method, url, body string, hdr map[string]string) (*http.Response, string) {
	s.t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.cookie != nil {
		req.AddCookie(s.cookie)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestSessionSignIn: an API token is exchanged for an HttpOnly,
// SameSite=Strict cookie that authenticates the API; unsafe requests with
// it need the session's CSRF token and this server's Origin; sign-in from
// another origin, a bad token, sign-out and a revoked token all end in a
// clear refusal.
func TestSessionSignIn(t *testing.T) {
	ts := server(t)
	origin := strings.TrimSuffix(ts.base, "/api/v1")
	b := &sessionClient{t: t, origin: origin}

	// Login CSRF: another site cannot sign this browser in.
	if resp, body := b.do("POST", ts.base+"/session", `{"token":"`+ts.alice+`"}`, map[string]string{"Origin": "https://evil.example"}); resp.StatusCode != 403 {
		t.Fatalf("sign-in from another origin: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{`{"token":"ahk_nope"}`, `{"token":""}`, `{"tok":"x"}`} {
		if resp, body := b.do("POST", ts.base+"/session", bad, map[string]string{"Origin": origin}); resp.StatusCode != 401 && resp.StatusCode != 400 {
			t.Fatalf("sign-in with %s: %d %s", bad, resp.StatusCode, body)
		}
	}
	resp, body := b.do("POST", ts.base+"/session", `{"token":"`+ts.alice+`"}`, map[string]string{"Origin": origin})
	if resp.StatusCode != 201 {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == webui.CookieName {
			b.cookie = c
		}
	}
	if b.cookie == nil {
		t.Fatal("no session cookie")
	}
	raw := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "path=/"} {
		if !strings.Contains(raw, want) {
			t.Errorf("cookie %q lacks %s", raw, want)
		}
	}
	if strings.Contains(b.cookie.Value, ts.alice) {
		t.Fatal("the cookie carries the API token")
	}
	var info struct {
		CSRF       string `json:"csrf"`
		User       struct{ Email string }
		Workspaces []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(body), &info); err != nil || info.CSRF == "" || info.User.Email != "alice@acme" || len(info.Workspaces) != 1 {
		t.Fatalf("session: %v %s", err, body)
	}
	b.csrf = info.CSRF

	// Reads need the cookie only.
	if resp, body := b.do("GET", ts.base+"/workspaces", "", nil); resp.StatusCode != 200 || !strings.Contains(body, ts.wsA) {
		t.Fatalf("workspaces with the cookie: %d %s", resp.StatusCode, body)
	}
	folder := ts.base + "/workspaces/" + ts.wsA + "/folders"
	cases := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no CSRF token", map[string]string{"Origin": origin}, 403},
		{"wrong CSRF token", map[string]string{"Origin": origin, webui.CSRFHeader: "x" + b.csrf}, 403},
		{"another origin", map[string]string{"Origin": "https://evil.example", webui.CSRFHeader: b.csrf}, 403},
		{"CSRF token and origin", map[string]string{"Origin": origin, webui.CSRFHeader: b.csrf}, 201},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if resp, body := b.do("POST", folder, `{"name":"`+strings.ReplaceAll(tc.name, " ", "-")+`"}`, tc.hdr); resp.StatusCode != tc.want {
				t.Fatalf("POST folder: %d (want %d) %s", resp.StatusCode, tc.want, body)
			}
		})
	}

	// Sign-out ends the session server-side: the old cookie is refused.
	if resp, body := b.do("DELETE", ts.base+"/session", "", map[string]string{"Origin": origin, webui.CSRFHeader: b.csrf}); resp.StatusCode != 204 {
		t.Fatalf("sign-out: %d %s", resp.StatusCode, body)
	}
	if resp, _ := b.do("GET", ts.base+"/workspaces", "", nil); resp.StatusCode != 401 {
		t.Fatalf("after sign-out: %d", resp.StatusCode)
	}
	if resp, _ := b.do("GET", ts.base+"/session", "", nil); resp.StatusCode != 401 {
		t.Fatalf("session after sign-out: %d", resp.StatusCode)
	}

	// Revoking the API token ends the sessions opened with it.
	resp, body = b.do("POST", ts.base+"/session", `{"token":"`+ts.bob+`"}`, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("sign-in bob: %d %s", resp.StatusCode, body)
	}
	b.cookie = resp.Cookies()[0]
	var tokens []struct{ ID string }
	_, body = b.do("GET", ts.base+"/tokens", "", nil)
	if err := json.Unmarshal([]byte(body), &tokens); err != nil || len(tokens) != 1 {
		t.Fatalf("tokens: %v %s", err, body)
	}
	bearer := &sessionClient{t: t}
	if resp, body := bearer.do("DELETE", ts.base+"/tokens/"+tokens[0].ID, "", map[string]string{"Authorization": "Bearer " + ts.bob}); resp.StatusCode != 204 {
		t.Fatalf("revoke: %d %s", resp.StatusCode, body)
	}
	if resp, _ := b.do("GET", ts.base+"/workspaces", "", nil); resp.StatusCode != 401 {
		t.Fatalf("session after its token was revoked: %d", resp.StatusCode)
	}
}

// TestUIPageHeaders: the page and its assets are served under a CSP that
// allows no inline script (nor eval), compressed when the browser accepts
// it; the status page moved to /status; /favicon.ico is the page's icon.
func TestUIPageHeaders(t *testing.T) {
	ts := server(t)
	origin := strings.TrimSuffix(ts.base, "/api/v1")
	for _, path := range []string{"/", "/w/x", "/w/x/c/y", "/assets/app.mjs", "/assets/preact.mjs", "/favicon.ico", "/assets/icon.svg"} {
		req, _ := http.NewRequest("GET", origin+path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if resp.StatusCode != 200 || csp != webui.CSP {
			t.Fatalf("%s: %d CSP %q", path, resp.StatusCode, csp)
		}
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: not compressed", path)
		}
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, _ := io.ReadAll(zr)
		resp.Body.Close()
		if strings.HasSuffix(path, ".ico") && (resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(string(body), "<svg")) {
			t.Errorf("%s: %s %.40q", path, resp.Header.Get("Content-Type"), body)
		}
		if path == "/" && (strings.Contains(string(body), "<script>") || !strings.Contains(string(body), `<script type="module" src="/assets/app.mjs">`)) {
			t.Errorf("/ has inline script or lacks the module:\n%s", body)
		}
	}
	for _, d := range strings.Split(webui.CSP, ";") {
		d = strings.TrimSpace(d)
		if strings.HasPrefix(d, "script-src") && (strings.Contains(d, "unsafe") || d != "script-src 'self'") {
			t.Errorf("script-src allows more than this server's files: %q", d)
		}
	}
	resp, err := http.Get(origin + "/assets/nope.js")
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("unknown asset: %v %v", resp, err)
	}
	resp, err = http.Get(origin + "/status")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/status: %v %v", resp, err)
	}
}

// TestSessionSwitch: signing in with another token while signed in keeps
// the first session; the switcher makes either one the session, refuses
// sessions this browser does not hold, and sign-out ends both.
func TestSessionSwitch(t *testing.T) {
	ts := server(t)
	origin := strings.TrimSuffix(ts.base, "/api/v1")
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	var csrf string
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.base+path, strings.NewReader(body))
		req.Header.Set("Origin", origin)
		req.Header.Set(webui.CSRFHeader, csrf)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	type info struct {
		CSRF     string
		User     struct{ Email string }
		Accounts []struct{ SessionID, Email string }
	}
	decode := func(body string) info {
		var i info
		if err := json.Unmarshal([]byte(body), &i); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		csrf = i.CSRF
		return i
	}
	if st, body := call("POST", "/session", `{"token":"`+ts.alice+`"}`); st != 201 {
		t.Fatalf("alice: %d %s", st, body)
	}
	st, body := call("POST", "/session", `{"token":"`+ts.carol+`"}`)
	if st != 201 {
		t.Fatalf("carol: %d %s", st, body)
	}
	i := decode(body)
	if i.User.Email != "carol@acme" || len(i.Accounts) != 2 || i.Accounts[1].Email != "alice@acme" {
		t.Fatalf("after the second sign-in: %+v", i)
	}
	if _, body := call("GET", "/workspaces", ""); strings.Contains(body, ts.wsA) {
		t.Fatalf("carol sees workspace A: %s", body)
	}
	if st, body := call("POST", "/session/switch", `{"sessionId":"nope"}`); st != 404 {
		t.Fatalf("switch to an unknown session: %d %s", st, body)
	}
	st, body = call("POST", "/session/switch", `{"sessionId":"`+i.Accounts[1].SessionID+`"}`)
	if st != 200 {
		t.Fatalf("switch: %d %s", st, body)
	}
	if i = decode(body); i.User.Email != "alice@acme" || len(i.Accounts) != 2 {
		t.Fatalf("after the switch: %+v", i)
	}
	if _, body := call("GET", "/workspaces", ""); !strings.Contains(body, ts.wsA) {
		t.Fatalf("alice does not see workspace A: %s", body)
	}
	if st, _ := call("DELETE", "/session", ""); st != 204 {
		t.Fatalf("sign-out: %d", st)
	}
	if st, _ := call("GET", "/session", ""); st != 401 {
		t.Fatalf("after sign-out: %d", st)
	}
	// The kept session ended too: a browser that kept its cookie gets nowhere.
	if st, _ := call("POST", "/session/switch", `{"sessionId":"`+i.Accounts[1].SessionID+`"}`); st != 401 {
		t.Fatalf("switch after sign-out: %d", st)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
)

// The OAuth authorisation code grant over HTTP against serve, for the
// rows of TestConnectorsEndToEnd whose provider connects by OAuth.

// oauthConnect makes a connection through the OAuth authorisation code
// grant over HTTP, as an API client: authorize answers the provider's URL,
// the fake plays the user's consent, and the callback (with the user's
// token) stores the connection and answers it as JSON.
func oauthConnect(t *testing.T, s *e2eServer, as *oauth.Server, provider string) string {
	t.Helper()
	var a struct {
		AuthorizationURL string `json:"authorizationUrl"`
	}
	st, body := s.do(t, "POST", "/connections/authorize", map[string]string{"provider": provider, "label": provider + " e2e"})
	if st != 200 || json.Unmarshal(body, &a) != nil || !strings.HasPrefix(a.AuthorizationURL, as.AuthURL()+"?") {
		t.Fatalf("authorize: %d %s", st, body)
	}
	au, _ := url.Parse(a.AuthorizationURL)
	code := as.Consent(a.AuthorizationURL)
	if code == "" {
		t.Fatalf("the provider refused the authorisation request %s", a.AuthorizationURL)
	}
	q := url.Values{"state": {au.Query().Get("state")}, "code": {code}}
	req, _ := http.NewRequest("GET", s.base+"/connections/callback?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var c struct{ ID, Provider, Auth string }
	if resp.StatusCode != 201 || json.Unmarshal(raw, &c) != nil || c.ID == "" || c.Provider != provider || c.Auth != "oauth2" {
		t.Fatalf("callback: %d %s", resp.StatusCode, raw)
	}
	for _, tok := range as.Issued() {
		if bytes.Contains(raw, []byte(tok)) {
			t.Fatal("the callback answered a token")
		}
	}
	return c.ID
}

// oauthConnectBrowser makes a connection through the OAuth grant as the
// workspace UI's browser does: signed in with the session cookie, it starts
// the grant (CSRF token and Origin), comes back from the provider's site
// without the SameSite=Strict cookie (so the callback answers the page that
// reloads it from this site), reloads with the cookie, and is sent to the
// UI with the outcome. It returns the new connection's id.
func oauthConnectBrowser(t *testing.T, s *e2eServer, as *oauth.Server, provider string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path, body string, hdr map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, s.root+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, raw
	}
	headers := map[string]string{"Content-Type": "application/json", "Origin": s.root}
	if resp, raw := send("POST", "/api/v1/session", `{"token":"`+s.token+`"}`, headers); resp.StatusCode != 201 {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, raw)
	}
	var sess struct{ CSRF string }
	if _, raw := send("GET", "/api/v1/session", "", nil); json.Unmarshal(raw, &sess) != nil || sess.CSRF == "" {
		t.Fatalf("session: %s", raw)
	}
	headers["X-CSRF-Token"] = sess.CSRF
	resp, raw := send("POST", "/api/v1/connections/authorize", `{"provider":"`+provider+`","label":"`+provider+` browser"}`, headers)
	var a struct {
		AuthorizationURL string `json:"authorizationUrl"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(raw, &a) != nil {
		t.Fatalf("authorize: %d %s", resp.StatusCode, raw)
	}
	code := as.Consent(a.AuthorizationURL)
	au, _ := url.Parse(a.AuthorizationURL)
	if code == "" || au == nil {
		t.Fatalf("the provider refused %s", a.AuthorizationURL)
	}
	// The provider's redirect: a cross-site navigation, which carries no
	// SameSite=Strict cookie.
	callback := "/api/v1/connections/callback?" + url.Values{"state": {au.Query().Get("state")}, "code": {code}}.Encode()
	req, _ := http.NewRequest("GET", s.root+callback, nil)
	resp, err := (&http.Client{CheckRedirect: browser.CheckRedirect}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`http-equiv="refresh" content="0;url=([^"]+)"`).FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("callback without the cookie: %d %s", resp.StatusCode, page)
	}
	// The page's reload, from this site: with the cookie.
	resp, raw = send("GET", html.UnescapeString(string(m[1])), "", nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/connections?connection=ok&provider="+provider {
		t.Fatalf("callback with the cookie: %d to %q %s", resp.StatusCode, resp.Header.Get("Location"), raw)
	}
	// The grant is used: the same code again is refused, sending the UI
	// an error, not a second connection.
	if resp, _ := send("GET", html.UnescapeString(string(m[1])), "", nil); resp.Header.Get("Location") != "/connections?connection=error&reason=expired" {
		t.Fatalf("the same callback again: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var list []struct{ ID, Label string }
	if st := s.call(t, s.token, "GET", "/connections", "", &list); st != 200 {
		t.Fatalf("connections: %d", st)
	}
	for _, c := range list {
		if c.Label == provider+" browser" {
			return c.ID
		}
	}
	t.Fatalf("no connection %q in %+v", provider+" browser", list)
	return ""
}

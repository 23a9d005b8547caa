package api_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/webui"
)

// TestConnectionCallbackBrowser: a browser coming back from the provider
// lands in the workspace UI with the outcome in the query and nothing
// secret; one arriving without its SameSite=Strict cookie gets a page that
// reloads the callback from this site, once; an API client still gets
// JSON problems. (The successful grant, through serve and a fake
// authorisation server, is in cmd/agenthost's TestConnectorsEndToEnd.)
func TestConnectionCallbackBrowser(t *testing.T) {
	ts := server(t)
	origin := strings.TrimSuffix(ts.base, "/api/v1")
	b := &sessionClient{t: t, origin: origin}
	resp, body := b.do("POST", ts.base+"/session", `{"token":"`+ts.alice+`"}`, map[string]string{"Origin": origin})
	if resp.StatusCode != 201 {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == webui.CookieName {
			b.cookie = c
		}
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(query string, cookie *http.Cookie, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.base+"/connections/callback?"+query, nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}
	stale := &http.Cookie{Name: webui.CookieName, Value: "not-a-session"}

	cases := []struct {
		name   string
		query  string
		cookie *http.Cookie
		status int
		where  string // Location
	}{
		{"a forged state", "state=forged-state&code=stolen-code", b.cookie, 303, "/connections?connection=error&reason=expired"},
		{"no code", "state=forged-state", b.cookie, 303, "/connections?connection=error&reason=invalid"},
		{"the user said no", "state=s1&error=access_denied&error_description=The+user+denied", b.cookie, 303, "/connections?connection=error&reason=access_denied"},
		{"a provider's odd error", "state=s1&error=%3Cscript%3Ealert(1)%3C/script%3E", b.cookie, 303, "/connections?connection=error&reason=provider_error"},
		{"a session that ended", "state=s1&code=c1", stale, 303, "/connections?connection=error&reason=signed_out"},
		{"still no cookie after the reload", "state=s1&code=c1&resumed=1", nil, 303, "/connections?connection=error&reason=signed_out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := get(tc.query, tc.cookie, nil)
			loc := resp.Header.Get("Location")
			if resp.StatusCode != tc.status || loc != tc.where {
				t.Fatalf("%d to %q, want %d to %q (%s)", resp.StatusCode, loc, tc.status, tc.where, body)
			}
			for _, secret := range []string{"forged-state", "stolen-code", "c1", "s1", "user"} {
				if strings.Contains(loc, secret) {
					t.Fatalf("the UI's URL %q carries %q", loc, secret)
				}
			}
			if resp.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Fatalf("Referrer-Policy %q", resp.Header.Get("Referrer-Policy"))
			}
		})
	}

	// Arriving from the provider's site, the browser sends no cookie: a
	// page reloads the callback from here, with only the grant's
	// parameters, escaped, and marked resumed.
	resp, body = get("state=s%22%3E%3Cscript%3Ex&code=c1&extra=dropped", nil, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("resume page: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	want := "/api/v1/connections/callback?" + url.Values{"state": {`s"><script>x`}, "code": {"c1"}, "resumed": {"1"}}.Encode()
	if !strings.Contains(body, `http-equiv="refresh" content="0;url=`+strings.ReplaceAll(want, "&", "&amp;")+`"`) ||
		strings.Contains(body, "<script") || strings.Contains(body, "dropped") {
		t.Fatalf("resume page:\n%s\nwant a refresh to %s", body, want)
	}

	// An API client gets problems, not redirects.
	for q, status := range map[string]int{"state=forged&code=x": 404, "state=s1&error=access_denied": 400, "state=s1": 400} {
		resp, body := get(q, nil, map[string]string{"Authorization": "Bearer " + ts.alice})
		if resp.StatusCode != status || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
			t.Errorf("API client, %s: %d %s, want %d", q, resp.StatusCode, body, status)
		}
	}
	if resp, _ := get("state=forged&code=x", nil, map[string]string{"Authorization": "Bearer ahk_nope"}); resp.StatusCode != 401 {
		t.Errorf("a bad token: %d", resp.StatusCode)
	}
}

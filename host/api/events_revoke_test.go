package api_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/webui"
	"github.com/agenthost/agenthost/host/workflows"
)

// TestEventStreamEndsWhenItsCredentialIsRevoked: an event stream opened
// with a token, or with a session signed in with one, stops delivering
// once the token is revoked, while events keep coming; reconnecting with
// it is refused. (An outside check saw a stream deliver 30 events in the
// 16 s after its token was revoked.)
func TestEventStreamEndsWhenItsCredentialIsRevoked(t *testing.T) {
	for _, via := range []string{"bearer", "session"} {
		t.Run(via, func(t *testing.T) {
			ts := server(t)
			ctx := context.Background()
			alice, err := ts.db.Authenticate(ctx, ts.alice)
			if err != nil {
				t.Fatal(err)
			}
			tok, secret, err := ts.db.CreateToken(ctx, alice.UserID, "stream", nil)
			if err != nil {
				t.Fatal(err)
			}
			w, err := ts.wf.Start(ctx, alice, workflows.NewWorkflow{WorkspaceID: ts.wsA, Name: "long"})
			if err != nil {
				t.Fatal(err)
			}
			// The credential the stream is opened with.
			open := func() *http.Request {
				req, _ := http.NewRequestWithContext(ctx, "GET", ts.base+"/workflows/"+w.ID+"/events", nil)
				req.Header.Set("Authorization", "Bearer "+secret)
				return req
			}
			if via == "session" {
				origin := strings.TrimSuffix(ts.base, "/api/v1")
				b := &sessionClient{t: t, origin: origin}
				resp, body := b.do("POST", ts.base+"/session", `{"token":"`+secret+`"}`, map[string]string{"Origin": origin})
				if resp.StatusCode != 201 {
					t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
				}
				var cookie *http.Cookie
				for _, c := range resp.Cookies() {
					if c.Name == webui.CookieName {
						cookie = c
					}
				}
				if cookie == nil {
					t.Fatal("no session cookie")
				}
				open = func() *http.Request {
					req, _ := http.NewRequestWithContext(ctx, "GET", ts.base+"/workflows/"+w.ID+"/events", nil)
					req.AddCookie(cookie)
					return req
				}
			}

			// The round keeps producing events until the test ends.
			stop := make(chan struct{})
			produced := make(chan struct{})
			go func() {
				defer close(produced)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
					if _, err := ts.wf.Append(ctx, alice, w.ID, workflows.EventChunk, map[string]any{"text": "x"}); err != nil {
						t.Errorf("append: %v", err)
						return
					}
				}
			}()
			defer func() { close(stop); <-produced }()

			resp, err := http.DefaultClient.Do(open())
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("open: %d", resp.StatusCode)
			}
			// The stream ends by itself; the body's end is the test's
			// signal, a hang is caught by the test binary's timeout.
			sc := bufio.NewScanner(resp.Body)
			events, afterRevoke := 0, 0
			revoked := false
			for sc.Scan() {
				if !strings.HasPrefix(sc.Text(), "event: ") {
					continue
				}
				events++
				if revoked {
					afterRevoke++
				}
				if events == 3 && !revoked {
					if status, _, raw := do(t, ts.base, call{"DELETE", "/tokens/" + tok.ID, ts.alice, "", nil}); status != 204 {
						t.Fatalf("revoke: %d %s", status, raw)
					}
					revoked = true
				}
			}
			if !revoked {
				t.Fatalf("the stream ended after %d events, before the revocation", events)
			}
			t.Logf("%d events delivered after the revocation, before the stream ended", afterRevoke)
			again, err := http.DefaultClient.Do(open())
			if err != nil {
				t.Fatal(err)
			}
			again.Body.Close()
			if again.StatusCode != 401 {
				t.Fatalf("reconnect with the revoked credential: %d", again.StatusCode)
			}
		})
	}
}

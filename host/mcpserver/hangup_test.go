package mcpserver_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/wasm"
)

// A client that gives up without notifications/cancelled (the official
// Python SDK's request timeout sends none: modelcontextprotocol/python-sdk
// issue 1458, still open in PR 2514) is found out by what it does next: it
// ends its session (DELETE) or closes the connection that carries the call's
// stream. Either stops the plugin call instead of letting it run, billed,
// for nobody.
func TestAClientThatGivesUpStopsTheCall(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		name   string
		giveUp func(t *testing.T, session string, stream io.Closer)
	}{
		{"session ended", func(t *testing.T, session string, _ io.Closer) {
			resp := f.rawPost(t, http.MethodDelete, session, "")
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				t.Fatalf("DELETE: %s", resp.Status)
			}
		}},
		{"stream closed", func(t *testing.T, _ string, stream io.Closer) { stream.Close() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			session := f.rawSession(t)
			resp := f.rawPost(t, http.MethodPost, session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spin","arguments":{}}}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("tools/call: %s", resp.Status)
			}
			time.Sleep(300 * time.Millisecond) // the call is running (spin runs until stopped)
			c.giveUp(t, session, resp.Body)
			select {
			case res := <-f.rec.ch:
				if res.Error == nil || res.Error.Code != wasm.CodeCanceled {
					t.Fatalf("the plugin call ended with %+v, want canceled", res)
				}
			case <-time.After(hangGuard):
				t.Fatal("the plugin call was not stopped")
			}
			resp.Body.Close()
		})
	}
}

// rawSession initialises a session of the 2025-11-25 revision by hand and
// returns its id.
func (f *fixture) rawSession(t *testing.T) string {
	t.Helper()
	resp := f.rawPost(t, http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if session == "" {
		t.Fatalf("initialize: %s, no session", resp.Status)
	}
	resp = f.rawPost(t, http.MethodPost, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return session
}

func (f *fixture) rawPost(t *testing.T, method, session, body string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, method, f.url(f.ws), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+f.token)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	// Its own connection: closing the body closes the socket the call's
	// stream is on, as a client that exits does.
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// A client that lost its stream and resumes it (GET with Last-Event-ID)
// within the grace keeps its call; the call stops when the resumed stream
// is lost in turn.
func TestAResumedStreamKeepsTheCall(t *testing.T) {
	const grace = time.Second
	f := newFixture(t, func(d *mcpserver.Deps) { d.ResumeGrace = grace })
	session := f.rawSession(t)
	resp := f.rawPost(t, http.MethodPost, session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"spin","arguments":{}}}`)
	last := firstEventID(t, resp.Body)
	time.Sleep(300 * time.Millisecond)
	resp.Body.Close()
	// The SDK answers a resuming GET's headers with its first event, so the
	// request is made aside; cancelling it loses the resumed stream.
	getCtx, loseResumed := context.WithCancel(context.Background())
	defer loseResumed()
	go func() {
		req, _ := http.NewRequestWithContext(getCtx, http.MethodGet, f.url(f.ws), nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+f.token)
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Last-Event-ID", last)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	select {
	case res := <-f.rec.ch:
		t.Fatalf("the resumed call ended: %+v", res)
	case <-time.After(3 * grace):
	}
	loseResumed()
	select {
	case res := <-f.rec.ch:
		if res.Error == nil || res.Error.Code != wasm.CodeCanceled {
			t.Fatalf("the plugin call ended with %+v, want canceled", res)
		}
	case <-time.After(hangGuard):
		t.Fatal("the plugin call was not stopped when its resumed stream was lost")
	}
}

// firstEventID reads SSE lines up to the first event id (the stream's
// priming event carries one).
func firstEventID(t *testing.T, r io.Reader) string {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
			return strings.TrimSpace(id)
		}
	}
	t.Fatalf("the stream carried no event id: %v", sc.Err())
	return ""
}

// A stream's priming event is an id with empty data and no event name, as
// the specification has it (2025-11-25, transports: "an SSE event
// consisting of an event ID and an empty data field"); a name of the SDK's
// own made the Python SDK warn on every call.
func TestPrimingEventHasNoName(t *testing.T) {
	f := newFixture(t)
	session := f.rawSession(t)
	resp := f.rawPost(t, http.MethodPost, session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Split(strings.TrimSpace(string(body)), "\n\n")
	if len(events) < 2 || !strings.HasPrefix(events[0], "id: ") || !strings.HasSuffix(events[0], "\ndata: ") {
		t.Fatalf("want a priming event (id, empty data) first, got %q", body)
	}
	if strings.Contains(string(body), "event: prime") {
		t.Errorf("the priming event is named: %q", body)
	}
}

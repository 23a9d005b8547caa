package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

type notePage struct {
	Items []struct {
		ID, Kind, SubjectID, Status, Name, Detail, WorkflowID, WorkspaceID string
		ReadAt                                                             *time.Time
	} `json:"items"`
	Unread int `json:"unread"`
}

// noteStream follows a person's notification stream; next waits for the
// next page it sends (at most 20 s).
type noteStream struct {
	t     *testing.T
	pages chan notePage
}

func followNotes(t *testing.T, ts testServer, token string) *noteStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.base+"/me/notifications/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("notification stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &noteStream{t: t, pages: make(chan notePage, 16)}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		typ := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && typ == "notifications":
				var pg notePage
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &pg) == nil {
					s.pages <- pg
				}
			}
		}
	}()
	return s
}

func (s *noteStream) next() notePage {
	s.t.Helper()
	select {
	case pg := <-s.pages:
		return pg
	case <-time.After(20 * time.Second):
		s.t.Fatal("no notifications event within 20 s")
		return notePage{}
	}
}

// TestNotificationsOverHTTP: a background job that ends is told to its
// person on their open stream at once and in their list, and to no one
// else; marking it read is the person's alone and reaches the stream; a
// malformed request is refused.
func TestNotificationsOverHTTP(t *testing.T) {
	ts := server(t)
	alice := followNotes(t, ts, ts.alice)
	if pg := alice.next(); len(pg.Items) != 0 || pg.Unread != 0 {
		t.Fatalf("first page %+v, want empty", pg)
	}
	bob := followNotes(t, ts, ts.bob)
	bob.next()

	ts.model.Script(llmtest.Reply("Report ready."))
	var j jobJSON
	status, _, raw := do(t, ts.base, call{"POST", "/workspaces/" + ts.wsA + "/background", ts.alice, "application/json",
		strings.NewReader(`{"description":"Write the report"}`)})
	if status != 202 {
		t.Fatalf("start: %d %s", status, raw)
	}
	mustJSON(t, raw, &j)
	pg := alice.next()
	if len(pg.Items) != 1 || pg.Unread != 1 {
		t.Fatalf("after the job: %+v", pg)
	}
	n := pg.Items[0]
	if n.Kind != "backgroundJob" || n.SubjectID != j.ID || n.Status != "completed" || n.Name != "Write the report" ||
		n.Detail != "Report ready." || n.WorkspaceID != ts.wsA || n.WorkflowID == "" || n.ReadAt != nil {
		t.Fatalf("told %+v", n)
	}
	var list notePage
	getJSON(t, ts, "/me/notifications", &list)
	if len(list.Items) != 1 || list.Items[0].ID != n.ID || list.Unread != 1 {
		t.Fatalf("list %+v", list)
	}
	if status, _, raw := do(t, ts.base, call{"GET", "/me/notifications", ts.bob, "", nil}); status != 200 || !strings.Contains(string(raw), `"items":[]`) {
		t.Fatalf("bob's list: %d %s", status, raw)
	}
	select {
	case pg := <-bob.pages:
		t.Fatalf("bob's stream told of alice's job: %+v", pg)
	default:
	}

	// Bob marking alice's notification changes nothing of hers.
	if status, _, raw := do(t, ts.base, call{"POST", "/me/notifications/read", ts.bob, "application/json", strings.NewReader(`{"ids":["` + n.ID + `"]}`)}); status != 200 {
		t.Fatalf("bob marks: %d %s", status, raw)
	}
	getJSON(t, ts, "/me/notifications", &list)
	if list.Unread != 1 {
		t.Fatalf("after bob marked alice's: %d unread", list.Unread)
	}
	status, _, raw = do(t, ts.base, call{"POST", "/me/notifications/read", ts.alice, "application/json", strings.NewReader(`{"ids":["` + n.ID + `"]}`)})
	if status != 200 || !strings.Contains(string(raw), `"unread":0`) {
		t.Fatalf("alice marks: %d %s", status, raw)
	}
	if pg := alice.next(); pg.Unread != 0 || len(pg.Items) != 1 || pg.Items[0].ReadAt == nil {
		t.Fatalf("stream after the read: %+v", pg)
	}
	for _, body := range []string{`{"ids":"all"}`, `{"unknown":1}`, `{"ids":[` + strings.Repeat(`"x",`, 100) + `"x"]}`} {
		if status, _, raw := do(t, ts.base, call{"POST", "/me/notifications/read", ts.alice, "application/json", strings.NewReader(body)}); status != 400 {
			t.Errorf("mark %s: %d %s, want 400", body[:min(len(body), 30)], status, raw)
		}
	}
	if status, _, _ := do(t, ts.base, call{"GET", "/me/notifications/events", "", "", nil}); status != 401 {
		t.Errorf("stream without a credential: %d, want 401", status)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/testenv"
)

// TestRoundSurvivesDatabaseOutage (issue 32 item 3): the database goes away
// for seconds while a round runs (a proxy in front of PostgreSQL is cut:
// connections break and new ones are refused, as in a restart) in the
// middle of the answer, as the answer ends, and while a file is uploaded.
// The round's events wait and are appended once the database is back: a
// client following the stream live sees every event once, with no gap; the
// chunks add up to the stored answer; the round completes.
func TestRoundSurvivesDatabaseOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	long := strings.Repeat("Every chunk of this answer must arrive. ", 10)
	cases := []struct {
		name string
		// step is the model's answer; cut and restore are the proxy's.
		step   func(cut, restore func()) llmtest.Step
		upload bool
		answer string
	}{
		{name: "mid-answer", answer: long, step: func(cut, restore func()) llmtest.Step {
			// Cut once the answer streams; back 5 s later, while it still does.
			return llmtest.Decide(func(llmtest.ChatRequest) llmtest.Step {
				time.AfterFunc(300*time.Millisecond, cut)
				time.AfterFunc(5300*time.Millisecond, restore)
				return llmtest.Reply(long).WithChunkDelay(30 * time.Millisecond)
			})
		}},
		{name: "as the round ends", answer: "A short final answer.", step: func(cut, restore func()) llmtest.Step {
			// The database goes as the model answers: the answer's chunks,
			// its message and the round's end all meet the outage.
			return llmtest.Decide(func(llmtest.ChatRequest) llmtest.Step {
				cut()
				time.AfterFunc(8*time.Second, restore)
				return llmtest.Reply("A short final answer.")
			})
		}},
		{name: "during an upload", upload: true, answer: long, step: func(cut, restore func()) llmtest.Step {
			return llmtest.Reply(long).WithChunkDelay(30 * time.Millisecond)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proxied, direct, proxy := testenv.PostgresBehindProxy(t)
			startOn, model, token, ws := hostsSetupOn(t, direct)
			h := startOn(proxied)
			// The outage waits for the live client's stream: a busy machine
			// may call the model before the client has connected, and a
			// stream asked for during the outage is refused (503).
			connected := make(chan struct{})
			cut := func() {
				select {
				case <-connected:
				case <-time.After(hangGuard):
				}
				proxy.Cut()
			}
			model.Script(tc.step(cut, proxy.Restore))
			var w struct {
				ID string `json:"id"`
			}
			if st := h.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"answer"}`, &w); st != 202 {
				t.Fatalf("start: %d", st)
			}
			// A client follows live from the start, across the outage.
			var live []hostEvent
			var liveErr error
			var following sync.WaitGroup
			following.Add(1)
			go func() {
				defer following.Done()
				live, liveErr = h.followFrom(token, w.ID, roundEnd, connected)
			}()
			if tc.upload {
				h.events(t, token, w.ID, func(e hostEvent) bool { return e.typ == "chunk" })
				proxy.Cut()
				_, err := uploadFile(h.base, token, ws, "notes.txt", []byte("kept once"))
				if err == nil || !strings.Contains(err.Error(), ": 503 ") || !strings.Contains(err.Error(), "database is unavailable") {
					t.Errorf("upload while the database is away: %v, want 503 saying so", err)
				}
				time.Sleep(2 * time.Second) // the round's writes meet the outage
				proxy.Restore()
				if _, err := uploadFile(h.base, token, ws, "notes.txt", []byte("kept once")); err != nil {
					t.Fatalf("upload once the database is back: %v", err)
				}
				// The refused upload left nothing behind: one file.
				var page struct{ Items []struct{ Name string } }
				h.call(t, token, "GET", "/files?workspace="+ws, "", &page)
				if n := strings.Count(strings.Join(fileNames(page.Items), ","), "notes.txt"); n != 1 {
					t.Errorf("the workspace holds %d notes.txt, want 1: %+v", n, page.Items)
				}
			}
			following.Wait()
			if liveErr != nil {
				t.Fatalf("the live client: %v", liveErr)
			}
			all := h.events(t, token, w.ID, roundEnd)
			checkStream(t, all, tc.answer)
			if len(live) != len(all) {
				t.Fatalf("the live client saw %d events, the stream holds %d", len(live), len(all))
			}
			for i := range all {
				if live[i] != all[i] {
					t.Fatalf("live event %d %+v, stored %+v", i+1, live[i], all[i])
				}
			}
			var got struct{ Status string }
			h.call(t, token, "GET", "/workflows/"+w.ID, "", &got)
			if got.Status != "completed" {
				t.Fatalf("workflow %s", got.Status)
			}
			// The outage did meet the round's writes.
			if !strings.Contains(h.stderr(), "database unavailable; the round waits and retries") {
				t.Fatalf("no write of the round waited:\n%s", h.stderr())
			}
			noCrash(t, h.child)
		})
	}
}

// checkStream checks a round's stream: ids 1, 2, 3, … without a gap, the
// assistant's chunks add up to its stored answer, and it completes once.
func checkStream(t *testing.T, evs []hostEvent, answer string) {
	t.Helper()
	chunks := map[string]string{}
	var stored, storedID string
	for i, e := range evs {
		if e.id != int64(i+1) {
			t.Fatalf("event %d has id %d: events lost or repeated", i+1, e.id)
		}
		switch e.typ {
		case "chunk":
			var c struct{ MessageID, Text string }
			json.Unmarshal([]byte(e.data), &c)
			chunks[c.MessageID] += c.Text
		case "message":
			var m struct{ ID, Role, Content string }
			json.Unmarshal([]byte(e.data), &m)
			if m.Role == "assistant" {
				stored, storedID = m.Content, m.ID
			}
		}
	}
	if last := evs[len(evs)-1]; last.typ != "complete" {
		t.Fatalf("the round ended %s %s", last.typ, last.data)
	}
	if stored != answer || chunks[storedID] != answer {
		t.Fatalf("stored answer %q, its chunks %q, want %q", stored, chunks[storedID], answer)
	}
}

func fileNames(files []struct{ Name string }) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
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
			model.Script(tc.step(proxy.Cut, proxy.Restore))
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
				live, liveErr = h.stream(token, w.ID, roundEnd)
			}()
			if tc.upload {
				h.events(t, token, w.ID, func(e hostEvent) bool { return e.typ == "chunk" })
				proxy.Cut()
				st, body := uploadFile(t, h, token, ws, "notes.txt", "kept once")
				if st != http.StatusServiceUnavailable || !strings.Contains(body, "database is unavailable") {
					t.Errorf("upload while the database is away: %d %s, want 503 saying so", st, body)
				}
				time.Sleep(2 * time.Second) // the round's writes meet the outage
				proxy.Restore()
				if st, body := uploadFile(t, h, token, ws, "notes.txt", "kept once"); st != http.StatusCreated {
					t.Fatalf("upload once the database is back: %d %s", st, body)
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

// uploadFile uploads content as name to the workspace.
func uploadFile(t *testing.T, h host, token, ws, name, content string) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", name)
	part.Write([]byte(content))
	mw.Close()
	req, _ := http.NewRequest("POST", h.base+"/workspaces/"+ws+"/files", &body)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestCutOffHostYieldsItsRound (issue 32 item 3): host A loses the database
// (its proxy is cut) mid-round for longer than its heartbeat lease; host B
// takes the round over (roundRestarted hostDied) and completes it. When A
// reaches the database again, its waiting writes find the round stamped
// with B and are dropped: nothing of A's attempt follows B's answer.
func TestCutOffHostYieldsItsRound(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	proxied, direct, proxy := testenv.PostgresBehindProxy(t)
	startOn, model, token, ws := hostsSetupOn(t, direct)
	a, b := startOn(proxied), startOn(direct)
	model.Script(llmtest.CallTools(llmtest.Call("lookup", `{"topic":"slow","sleepMs":1500}`)))
	model.SetDefault(llmtest.EndpointChat, llmtest.Reply("Done on B."))
	var w struct {
		ID string `json:"id"`
	}
	if st := a.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"first"}`, &w); st != 202 {
		t.Fatalf("start on A: %d", st)
	}
	b.events(t, token, w.ID, func(e hostEvent) bool { return e.typ == "toolCall" })
	proxy.Cut()
	first := b.events(t, token, w.ID, roundEnd)
	if last := first[len(first)-1]; last.typ != "complete" {
		t.Fatalf("the round ended %s %s", last.typ, last.data)
	}
	restarted := false
	for _, e := range first {
		restarted = restarted || (e.typ == "roundRestarted" && strings.Contains(e.data, `"reason":"hostDied"`))
	}
	if !restarted {
		t.Fatalf("no roundRestarted hostDied: %v", first)
	}
	proxy.Restore()
	a.waitFor(t, "a write waiting for the database is dropped")
	// The next round follows B's answer directly: no event of A's cut
	// attempt came in between.
	if st := b.call(t, token, "POST", "/workspaces/"+ws+"/workflows", `{"prompt":"second","workflowId":"`+w.ID+`"}`, nil); st != 202 {
		t.Fatalf("second round on B: %d", st)
	}
	all := b.events(t, token, w.ID, func(e hostEvent) bool { return e.typ == "complete" && e.id > first[len(first)-1].id })
	for i, e := range all {
		if e.id != int64(i+1) {
			t.Fatalf("event %d has id %d", i+1, e.id)
		}
	}
	if next := all[len(first)]; next.typ != "status" || !strings.Contains(next.data, `"running"`) {
		t.Fatalf("after the first round's end came %s %s, want the second round's status", next.typ, next.data)
	}
	answers := 0
	for _, e := range all[:len(first)] {
		if e.typ == "message" && strings.Contains(e.data, `"role":"assistant"`) {
			answers++
		}
	}
	if answers != 1 {
		t.Fatalf("the first round stored %d answers, want B's only", answers)
	}
	noCrash(t, a.child)
	noCrash(t, b.child)
}

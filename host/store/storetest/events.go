package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

func testEvents(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	svc := wfService(w)

	t.Run("concurrent appends get gap-free ordered sequence numbers", func(t *testing.T) {
		wf := startWF(t, svc, w.alice, w.wsA.ID) // event 1: status
		const goroutines, each = 50, 20
		var wg sync.WaitGroup
		got := make([][]int64, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				for i := range each {
					ev, err := svc.Append(ctx, w.alice, wf.ID, workflows.EventChunk, workflows.ChunkData{MessageID: "m", Text: fmt.Sprintf("%d/%d", g, i)})
					if err != nil {
						t.Error(err)
						return
					}
					got[g] = append(got[g], ev.Seq)
				}
			})
		}
		wg.Wait()
		seen := map[int64]bool{}
		for g, seqs := range got {
			if !slices.IsSorted(seqs) {
				t.Errorf("goroutine %d's appends out of order: %v", g, seqs)
			}
			for _, s := range seqs {
				if seen[s] {
					t.Fatalf("seq %d handed out twice", s)
				}
				seen[s] = true
			}
		}
		evs := allEvents(t, svc, w.alice, wf.ID)
		if len(evs) != 1+goroutines*each {
			t.Fatalf("%d events stored, want %d", len(evs), 1+goroutines*each)
		}
		for i, ev := range evs {
			if ev.Seq != int64(i+1) || ev.WorkflowID != wf.ID {
				t.Fatalf("event %d has seq %d", i, ev.Seq)
			}
			if i == 0 {
				continue
			}
			var c workflows.ChunkData
			if err := json.Unmarshal(ev.Data, &c); err != nil || ev.Type != workflows.EventChunk || !seen[ev.Seq] {
				t.Fatalf("event %d: %+v %v", i, ev, err)
			}
		}
		// The text of each goroutine's chunks is in its order too.
		next := map[string]int{}
		for _, ev := range evs[1:] {
			var c workflows.ChunkData
			_ = json.Unmarshal(ev.Data, &c)
			var g, i int
			fmt.Sscanf(c.Text, "%d/%d", &g, &i)
			key := fmt.Sprint(g)
			if next[key] != i {
				t.Fatalf("goroutine %d's chunk %d stored before chunk %d", g, i, next[key])
			}
			next[key]++
		}
		heads, err := w.env.DB.EventHeads(ctx, []string{wf.ID, "nope"})
		if err != nil || len(heads) != 1 || heads[wf.ID] != 1+goroutines*each {
			t.Fatalf("heads: %v %v", heads, err)
		}
	})

	t.Run("events after a sequence number", func(t *testing.T) {
		wf := startWF(t, svc, w.alice, w.wsA.ID)
		for i := range 9 {
			if _, err := svc.Append(ctx, w.alice, wf.ID, workflows.EventStatus, workflows.StatusData{Status: workflows.StatusRunning, Label: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		seqs := func(evs []workflows.Event) []int64 {
			var out []int64
			for _, e := range evs {
				out = append(out, e.Seq)
			}
			return out
		}
		for _, c := range []struct {
			after int64
			limit int
			want  []int64
		}{
			{0, 0, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
			{7, 0, []int64{8, 9, 10}},
			{3, 2, []int64{4, 5}},
			{10, 0, nil},
			{99, 0, nil},
			{-5, 1, []int64{1}},
		} {
			got, err := svc.Events(ctx, w.alice, wf.ID, c.after, c.limit)
			if err != nil || !slices.Equal(seqs(got), c.want) {
				t.Errorf("after %d limit %d: %v %v, want %v", c.after, c.limit, seqs(got), err, c.want)
			}
		}
		got, _ := svc.Events(ctx, w.alice, wf.ID, 4, 1)
		var sd workflows.StatusData
		if err := json.Unmarshal(got[0].Data, &sd); err != nil || sd.Label != "3" || got[0].Type != workflows.EventStatus || got[0].Time.IsZero() {
			t.Fatalf("event 5: %+v", got[0])
		}
		if _, err := svc.Events(ctx, w.alice, "nope", 0, 0); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("events of an unknown workflow: %v", err)
		}
	})

	t.Run("payloads and who appends what", func(t *testing.T) {
		wf := startWF(t, svc, w.alice, w.wsA.ID)
		payloads := map[workflows.EventType]any{
			workflows.EventStatus:           workflows.StatusData{Status: workflows.StatusRunning, Label: "Reading report.pdf"},
			workflows.EventChunk:            workflows.ChunkData{MessageID: "m1", Text: "Hel"},
			workflows.EventToolCall:         workflows.ToolCallData{Round: 1, CallID: "c1", Tool: "readFile", Arguments: json.RawMessage(`{"path":"a.txt"}`)},
			workflows.EventToolResult:       workflows.ToolResultData{Round: 1, CallID: "c1", Tool: "readFile", OK: true, Content: "text", DurationMS: 12},
			workflows.EventAgentProgress:    workflows.AgentProgressData{Round: 1, MaxRounds: 25, ToolCalls: 1, CostCHF: "0.01"},
			workflows.EventAgentSummary:     workflows.AgentSummaryData{Rounds: 1, ToolCalls: 1, CostCHF: "0.01", Tokens: 900, DurationMS: 1500, Reason: "completed"},
			workflows.EventFileCreated:      workflows.FileCreatedData{FileID: "f1", DocumentID: "d1", Name: "out.md", MIMEType: "text/markdown", Size: 10},
			workflows.EventFileEditProposal: workflows.FileEditProposalData{ProposalID: "p1", FileID: "f1", Name: "out.md", Diff: "@@ -1 +1 @@\n-a\n+b\n"},
			workflows.EventFileVersion:      workflows.FileVersionData{ProposalID: "p1", FileID: "f1", Name: "out.md", SHA256: "ab", Size: 11},
			workflows.EventDataSourceAccess: workflows.DataSourceAccessData{Provider: "microsoft", Service: "sharepoint", Operation: "browse", Path: "/Shared"},
			workflows.EventVoiceResponse:    workflows.VoiceResponseData{MIMEType: "audio/mpeg", Audio: []byte{1, 2, 3}, Text: "Hello"},
		}
		var appended []workflows.EventType
		for _, typ := range workflows.EventTypes() {
			p, ok := payloads[typ]
			if !ok {
				continue
			}
			ev, err := svc.Append(ctx, w.alice, wf.ID, typ, p)
			if err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			want, _ := json.Marshal(p)
			if string(ev.Data) != string(want) {
				t.Errorf("%s payload %s, want %s", typ, ev.Data, want)
			}
			appended = append(appended, typ)
		}
		raw := json.RawMessage(`{"messageId":"m1","text":"lo"}`)
		if ev, err := svc.Append(ctx, w.alice, wf.ID, workflows.EventChunk, raw); err != nil || string(ev.Data) != string(raw) {
			t.Fatalf("raw payload: %s %v", ev.Data, err)
		}
		appended = append(appended, workflows.EventChunk)
		for _, c := range []struct {
			typ     workflows.EventType
			payload any
		}{
			{workflows.EventMessage, workflows.Message{}}, {workflows.EventComplete, workflows.EndData{}},
			{workflows.EventStopped, workflows.EndData{}}, {workflows.EventError, workflows.EndData{}},
			{"bogus", nil}, {workflows.EventChunk, json.RawMessage(`{nope`)}, {workflows.EventChunk, func() {}},
		} {
			if _, err := svc.Append(ctx, w.alice, wf.ID, c.typ, c.payload); !errors.Is(err, tenancy.ErrInvalid) {
				t.Errorf("appending %q: %v, want invalid", c.typ, err)
			}
		}
		// The operations append their own events, in order with the rest.
		if _, err := svc.Stop(ctx, w.alice, wf.ID, "user pressed stop"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Resume(ctx, w.alice, wf.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Fail(ctx, w.alice, wf.ID, "model unreachable"); err != nil {
			t.Fatal(err)
		}
		evs := allEvents(t, svc, w.alice, wf.ID)
		var types []workflows.EventType
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		want := append(append([]workflows.EventType{workflows.EventStatus}, appended...), workflows.EventStopped, workflows.EventStatus, workflows.EventError)
		if !slices.Equal(types, want) {
			t.Fatalf("stream %v\nwant   %v", types, want)
		}
		var stop, fail workflows.EndData
		_ = json.Unmarshal(evs[len(evs)-3].Data, &stop)
		_ = json.Unmarshal(evs[len(evs)-1].Data, &fail)
		if stop.Reason != "user pressed stop" || fail.Message != "model unreachable" {
			t.Errorf("end payloads: %+v %+v", stop, fail)
		}
		// Appending to a workflow that is not running is allowed: an agent
		// may still report after a user's stop.
		if _, err := svc.Append(ctx, w.alice, wf.ID, workflows.EventAgentSummary, workflows.AgentSummaryData{Reason: "error"}); err != nil {
			t.Errorf("append after the end: %v", err)
		}
	})

	t.Run("deleting a workflow deletes its events", func(t *testing.T) {
		wf := startWF(t, svc, w.alice, w.wsA.ID)
		if _, err := svc.Append(ctx, w.alice, wf.ID, workflows.EventChunk, workflows.ChunkData{Text: "x"}); err != nil {
			t.Fatal(err)
		}
		if err := svc.Delete(ctx, w.alice, wf.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, w, "SELECT COUNT(*) FROM events WHERE workflow_id = '"+wf.ID+"'"); n != 0 {
			t.Errorf("%d events left", n)
		}
		if _, err := svc.Append(ctx, w.alice, wf.ID, workflows.EventChunk, workflows.ChunkData{Text: "x"}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("append to a deleted workflow: %v", err)
		}
		heads, err := w.env.DB.EventHeads(ctx, []string{wf.ID})
		if err != nil || len(heads) != 0 {
			t.Errorf("heads of a deleted workflow: %v %v", heads, err)
		}
	})
}

package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

func msgIDs(ms []workflows.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// testWorkflowMessages: messages with documents (the file bridge), their
// listing after an id or a sequence number, deletion, and file removal.
func testWorkflowMessages(t *testing.T, w *world) {
	ctx := context.Background()
	svc := wfService(w)
	wf := startWF(t, svc, w.alice, w.wsA.ID)
	report := upload(t, w, w.alice, w.wsA.ID, "report.pdf", "%PDF-1.7 quarterly")
	notes := upload(t, w, w.alice, w.wsA.ID, "notes.txt", "some notes")
	carols := upload(t, w, w.carol, w.wsB.ID, "secret.txt", "carol's")

	finished := time.Now().Add(time.Second)
	first, err := svc.AddMessage(ctx, w.alice, workflows.Message{WorkflowID: wf.ID, Status: workflows.MessageFirst, Role: workflows.RoleUser,
		Content: "Summarise these", FinishedAt: &finished, Stats: workflows.Stats{BytesReceived: 42},
		Documents: []workflows.Document{{FileID: report.ID, Label: "upload"}, {FileID: notes.ID, Name: "my notes", Label: "upload"}}})
	if err != nil {
		t.Fatal(err)
	}
	if first.ID == "" || first.Seq != 1 || first.Round != 1 || first.StartedAt.IsZero() || first.FinishedAt == nil || len(first.Documents) != 2 {
		t.Fatalf("first message: %+v", first)
	}
	d0, d1 := first.Documents[0], first.Documents[1]
	if d0.ID == "" || d0.MessageID != first.ID || d0.FileID != report.ID || d0.Name != "report.pdf" || d0.MIMEType != "application/pdf" ||
		d0.Size != report.Size || d0.Label != "upload" || d0.Ref() != "docItem:"+d0.ID {
		t.Fatalf("document from the file: %+v", d0)
	}
	if d1.Name != "my notes" || d1.MIMEType != notes.MIMEType {
		t.Fatalf("document with its own name: %+v", d1)
	}

	// The agent streams its answer under an id it chose, then stores it.
	answerID := "0190c5f0-0000-7000-8000-000000000001"
	step, err := svc.AddMessage(ctx, w.alice, workflows.Message{ID: answerID, WorkflowID: wf.ID, ParentID: first.ID, Status: workflows.MessageStep,
		Role: workflows.RoleAssistant, Content: "Reading…", AgentName: "agent"})
	if err != nil || step.ID != answerID || step.Seq != 2 || step.ParentID != first.ID || len(step.Documents) != 0 || step.Documents == nil {
		t.Fatalf("step message: %+v %v", step, err)
	}
	last, err := svc.AddMessage(ctx, w.alice, workflows.Message{WorkflowID: wf.ID, ParentID: first.ID, Status: workflows.MessageLast,
		Role: workflows.RoleAssistant, Content: "Here it is", Documents: []workflows.Document{{FileID: report.ID, Label: "writeFile:summary.md"}}})
	if err != nil || last.Seq != 3 {
		t.Fatalf("last message: %+v %v", last, err)
	}

	all, err := svc.Messages(ctx, w.alice, wf.ID, workflows.After{}, 0)
	if err != nil || !slices.Equal(msgIDs(all), []string{first.ID, step.ID, last.ID}) {
		t.Fatalf("all messages: %v %v", msgIDs(all), err)
	}
	if got := all[0]; len(got.Documents) != 2 || got.Documents[0] != d0 || got.Documents[1] != d1 || !got.FinishedAt.Equal(*first.FinishedAt) ||
		got.Stats.BytesReceived != 42 || !got.StartedAt.Equal(first.StartedAt) {
		t.Fatalf("listed first message: %+v\nstored %+v", got, first)
	}
	for _, c := range []struct {
		name  string
		after workflows.After
		limit int
		want  []string
	}{
		{"after the first's id", workflows.After{ID: first.ID}, 0, []string{step.ID, last.ID}},
		{"after seq 2", workflows.After{Seq: 2}, 0, []string{last.ID}},
		{"id wins over seq", workflows.After{ID: last.ID, Seq: 0}, 0, nil},
		{"limit", workflows.After{}, 2, []string{first.ID, step.ID}},
		{"past the end", workflows.After{Seq: 99}, 0, nil},
	} {
		got, err := svc.Messages(ctx, w.alice, wf.ID, c.after, c.limit)
		if err != nil || !slices.Equal(msgIDs(got), c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, msgIDs(got), err, c.want)
		}
	}

	// Every stored message is also an event carrying it.
	var msgEvents []workflows.Message
	for _, ev := range allEvents(t, svc, w.alice, wf.ID) {
		if ev.Type == workflows.EventMessage {
			var m workflows.Message
			if err := json.Unmarshal(ev.Data, &m); err != nil {
				t.Fatal(err)
			}
			msgEvents = append(msgEvents, m)
		}
	}
	if len(msgEvents) != 3 || msgEvents[0].ID != first.ID || len(msgEvents[0].Documents) != 2 || msgEvents[0].Documents[0].ID != d0.ID {
		t.Fatalf("message events: %+v", msgEvents)
	}

	t.Run("document references", func(t *testing.T) {
		got, err := svc.ResolveDocuments(ctx, w.alice, wf.ID, []string{"docItem:" + d1.ID, "docList:writeFile:summary.md"})
		if err != nil || len(got) != 2 || got[0].ID != d1.ID || got[1].MessageID != last.ID {
			t.Fatalf("resolved: %+v %v", got, err)
		}
		got, err = svc.ResolveDocuments(ctx, w.alice, wf.ID, []string{"docList:upload"})
		if err != nil || len(got) != 2 || got[0].ID != d0.ID || got[1].ID != d1.ID {
			t.Fatalf("docList: %+v %v", got, err)
		}
		if _, err := svc.ResolveDocuments(ctx, w.alice, wf.ID, []string{"docItem:nope"}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("unknown docItem: %v", err)
		}
		// docList:<messageId>:<label> names the label's documents
		// of one message only; docItem:<id>:<fileName> is the item.
		wf2 := startWF(t, svc, w.alice, w.wsA.ID)
		m1, err := svc.AddMessage(ctx, w.alice, workflows.Message{WorkflowID: wf2.ID, Status: workflows.MessageFirst, Role: workflows.RoleUser,
			Content: "one", Documents: []workflows.Document{{FileID: report.ID, Label: "upload"}, {FileID: notes.ID, Label: "upload"}}})
		if err != nil {
			t.Fatal(err)
		}
		m2, err := svc.AddMessage(ctx, w.alice, workflows.Message{WorkflowID: wf2.ID, Status: workflows.MessageStep, Role: workflows.RoleAssistant,
			Content: "two", Documents: []workflows.Document{{FileID: notes.ID, Label: "upload"}}})
		if err != nil {
			t.Fatal(err)
		}
		got, err = svc.ResolveDocuments(ctx, w.alice, wf2.ID, []string{"docList:" + m1.ID + ":upload"})
		if err != nil || len(got) != 2 || got[0].MessageID != m1.ID || got[1].MessageID != m1.ID {
			t.Fatalf("docList of one message: %+v %v", got, err)
		}
		got, err = svc.ResolveDocuments(ctx, w.alice, wf2.ID, []string{"docList:" + m2.ID + ":upload", "docItem:" + m1.Documents[0].ID + ":report.pdf"})
		if err != nil || len(got) != 2 || got[0].ID != m1.Documents[0].ID || got[1].MessageID != m2.ID {
			t.Fatalf("docList of the other message and a named item: %+v %v", got, err)
		}
		if got, err := svc.ResolveDocuments(ctx, w.alice, wf2.ID, []string{"docList:upload"}); err != nil || len(got) != 3 {
			t.Fatalf("docList over all messages: %+v %v", got, err)
		}
		if _, err := svc.ResolveDocuments(ctx, w.alice, wf2.ID, []string{"docList:"}); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("empty label: %v", err)
		}
		other := startWF(t, svc, w.alice, w.wsA.ID)
		if _, err := svc.ResolveDocuments(ctx, w.alice, other.ID, []string{"docItem:" + d0.ID}); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("a document of another workflow resolved: %v", err)
		}
	})

	t.Run("bad messages change nothing", func(t *testing.T) {
		other := startWF(t, svc, w.alice, w.wsA.ID)
		otherMsg, err := svc.AddMessage(ctx, w.alice, workflows.Message{WorkflowID: other.ID, Status: workflows.MessageFirst, Role: workflows.RoleUser})
		if err != nil {
			t.Fatal(err)
		}
		eventsBefore := len(allEvents(t, svc, w.alice, wf.ID))
		base := workflows.Message{WorkflowID: wf.ID, Status: workflows.MessageStep, Role: workflows.RoleAssistant}
		for _, c := range []struct {
			name string
			edit func(*workflows.Message)
			want error
		}{
			{"a file the user cannot read", func(m *workflows.Message) {
				m.Documents = []workflows.Document{{FileID: notes.ID}, {FileID: carols.ID}}
			}, tenancy.ErrNotFound},
			{"an unknown file", func(m *workflows.Message) { m.Documents = []workflows.Document{{FileID: "nope"}} }, tenancy.ErrNotFound},
			{"a document without a file", func(m *workflows.Message) { m.Documents = []workflows.Document{{Name: "x"}} }, tenancy.ErrInvalid},
			{"a parent in another workflow", func(m *workflows.Message) { m.ParentID = otherMsg.ID }, tenancy.ErrNotFound},
			{"a taken id", func(m *workflows.Message) { m.ID = first.ID }, tenancy.ErrConflict},
			{"no status", func(m *workflows.Message) { m.Status = "" }, tenancy.ErrInvalid},
			{"an unknown role", func(m *workflows.Message) { m.Role = "robot" }, tenancy.ErrInvalid},
			{"a future round", func(m *workflows.Message) { m.Round = 5 }, tenancy.ErrInvalid},
		} {
			m := base
			c.edit(&m)
			if _, err := svc.AddMessage(ctx, w.alice, m); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		}
		got, _ := svc.Messages(ctx, w.alice, wf.ID, workflows.After{}, 0)
		if len(got) != 3 {
			t.Errorf("refused messages were stored: %v", msgIDs(got))
		}
		if n := len(allEvents(t, svc, w.alice, wf.ID)); n != eventsBefore {
			t.Errorf("refused messages appended events: %d → %d", eventsBefore, n)
		}
		// The sequence continues without a hole where the refused ones were.
		next, err := svc.AddMessage(ctx, w.alice, base)
		if err != nil || next.Seq != 4 {
			t.Fatalf("next message after refusals: seq %d %v", next.Seq, err)
		}
		if err := svc.DeleteMessage(ctx, w.alice, wf.ID, next.ID); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("remove a file from a message", func(t *testing.T) {
		if err := svc.RemoveFile(ctx, w.alice, wf.ID, first.ID, notes.ID); err != nil {
			t.Fatal(err)
		}
		got, _ := svc.Messages(ctx, w.alice, wf.ID, workflows.After{}, 1)
		if len(got[0].Documents) != 1 || got[0].Documents[0].ID != d0.ID {
			t.Fatalf("documents after removal: %+v", got[0].Documents)
		}
		if _, err := w.svc.Get(ctx, w.alice, notes.ID); err != nil {
			t.Fatalf("removing a file from a message deleted the file: %v", err)
		}
		for _, c := range []struct{ name, msg, file string }{
			{"again", first.ID, notes.ID}, {"a file not on the message", step.ID, report.ID}, {"an unknown message", "nope", report.ID},
		} {
			if err := svc.RemoveFile(ctx, w.alice, wf.ID, c.msg, c.file); !errors.Is(err, tenancy.ErrNotFound) {
				t.Errorf("%s: %v", c.name, err)
			}
		}
		// The document id is accepted in place of the file id.
		if err := svc.RemoveFile(ctx, w.alice, wf.ID, last.ID, last.Documents[0].ID); err != nil {
			t.Fatalf("remove by document id: %v", err)
		}
		// Deleting the file takes its documents with it.
		if err := w.svc.Delete(ctx, w.alice, report.ID); err != nil {
			t.Fatal(err)
		}
		got, _ = svc.Messages(ctx, w.alice, wf.ID, workflows.After{}, 1)
		if len(got[0].Documents) != 0 {
			t.Fatalf("documents of a deleted file: %+v", got[0].Documents)
		}
	})

	t.Run("delete a message", func(t *testing.T) {
		if err := svc.DeleteMessage(ctx, w.alice, wf.ID, first.ID); err != nil {
			t.Fatal(err)
		}
		got, err := svc.Messages(ctx, w.alice, wf.ID, workflows.After{}, 0)
		if err != nil || !slices.Equal(msgIDs(got), []string{step.ID, last.ID}) || got[0].ParentID != "" || got[0].Seq != 2 {
			t.Fatalf("after delete: %+v %v", got, err)
		}
		if err := svc.DeleteMessage(ctx, w.alice, wf.ID, first.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("deleting twice: %v", err)
		}
		// Polling after a deleted message's id cannot know where it was.
		if _, err := svc.Messages(ctx, w.alice, wf.ID, workflows.After{ID: first.ID}, 0); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("after a deleted id: %v", err)
		}
		other := startWF(t, svc, w.alice, w.wsA.ID)
		if err := svc.DeleteMessage(ctx, w.alice, other.ID, step.ID); !errors.Is(err, tenancy.ErrNotFound) {
			t.Errorf("deleting through another workflow: %v", err)
		}
		// A new message continues the sequence; numbers are never reused.
		m, err := svc.AddMessage(ctx, w.alice, workflows.Message{WorkflowID: wf.ID, Status: workflows.MessageFirst, Role: workflows.RoleUser})
		if err != nil || m.Seq != 5 {
			t.Fatalf("message after deletions: seq %d %v", m.Seq, err)
		}
	})
}

// testWorkflowLogs: log entries with progress, listed after an id or a
// sequence number.
func testWorkflowLogs(t *testing.T, w *world) {
	ctx := context.Background()
	svc := wfService(w)
	wf := startWF(t, svc, w.alice, w.wsA.ID)
	var logs []workflows.Log
	for i, text := range []string{"Workflow initialized", "Analyzing request and planning work", "Work plan created", "Running task 1/2: agent", "Creating final response"} {
		l, err := svc.AddLog(ctx, w.alice, workflows.Log{WorkflowID: wf.ID, Message: text, Progress: i * 20, AgentName: "planner"})
		if err != nil {
			t.Fatal(err)
		}
		if l.Seq != int64(i+1) || l.ID == "" || l.Type != workflows.LogInfo || l.Status != workflows.StatusRunning || l.Timestamp.IsZero() {
			t.Fatalf("log %d: %+v", i, l)
		}
		logs = append(logs, l)
	}
	if _, err := svc.Stop(ctx, w.alice, wf.ID, ""); err != nil {
		t.Fatal(err)
	}
	stopLog, err := svc.AddLog(ctx, w.alice, workflows.Log{WorkflowID: wf.ID, Message: "Workflow stopped by user", Progress: 100, Type: workflows.LogWarning})
	if err != nil || stopLog.Status != workflows.StatusStopped || stopLog.Seq != 6 {
		t.Fatalf("log after stop: %+v %v", stopLog, err)
	}
	logs = append(logs, stopLog)
	seqs := func(ls []workflows.Log) []int64 {
		var out []int64
		for _, l := range ls {
			out = append(out, l.Seq)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		after workflows.After
		limit int
		want  []int64
	}{
		{"all", workflows.After{}, 0, []int64{1, 2, 3, 4, 5, 6}},
		{"after the second's id", workflows.After{ID: logs[1].ID}, 0, []int64{3, 4, 5, 6}},
		{"after seq 4", workflows.After{Seq: 4}, 0, []int64{5, 6}},
		{"after the last", workflows.After{ID: stopLog.ID}, 0, nil},
		{"limit", workflows.After{Seq: 1}, 2, []int64{2, 3}},
	} {
		got, err := svc.Logs(ctx, w.alice, wf.ID, c.after, c.limit)
		if err != nil || !slices.Equal(seqs(got), c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, seqs(got), err, c.want)
		}
	}
	got, _ := svc.Logs(ctx, w.alice, wf.ID, workflows.After{Seq: 2}, 1)
	if len(got) != 1 || got[0].ID != logs[2].ID || got[0].Message != "Work plan created" || got[0].Progress != 40 || got[0].AgentName != "planner" ||
		!got[0].Timestamp.Equal(logs[2].Timestamp) {
		t.Fatalf("listed log: %+v\nstored %+v", got, logs[2])
	}
	if _, err := svc.Logs(ctx, w.alice, wf.ID, workflows.After{ID: "nope"}, 0); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("after an unknown id: %v", err)
	}
	for _, c := range []struct {
		name string
		l    workflows.Log
	}{
		{"progress over 100", workflows.Log{WorkflowID: wf.ID, Progress: 101}},
		{"negative progress", workflows.Log{WorkflowID: wf.ID, Progress: -1}},
		{"unknown type", workflows.Log{WorkflowID: wf.ID, Type: "debug"}},
		{"unknown status", workflows.Log{WorkflowID: wf.ID, Status: "paused"}},
	} {
		if _, err := svc.AddLog(ctx, w.alice, c.l); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

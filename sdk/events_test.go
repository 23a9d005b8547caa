package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/sdk"
)

// sseEvent is one event as the server writes it.
func sseEvent(seq int) string {
	switch seq % 3 {
	case 0:
		return fmt.Sprintf("id: %d\r\nevent: chunk\r\ndata: {\"messageId\":\"m\",\"text\":\"t%d\"}\r\n\r\n", seq, seq)
	case 1:
		return fmt.Sprintf(": ping\n\nid: %d\nevent: toolCall\ndata: {\"round\":1,\"callId\":\"c%d\",\n", seq, seq) +
			"data: \"tool\":\"searchKnowledge\",\"arguments\":{\"q\":\"x\"}}\n\n"
	}
	return fmt.Sprintf("id: %d\nevent: toolResult\ndata: {\"tool\":\"searchKnowledge\",\"ok\":true,\"durationMs\":%d}\n\n", seq, seq)
}

// TestEventsResumeAfterCuts: a stream cut in the middle of an event, and
// again between an event's fields, is resumed with Last-Event-ID; the
// reader returns every event once, in order, with its typed payload.
func TestEventsResumeAfterCuts(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	c := testClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Header.Get("Last-Event-ID"))
		conn := len(asked)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		var out string
		switch conn {
		case 1:
			for i := 1; i <= 4; i++ {
				out += sseEvent(i)
			}
			out += sseEvent(5)[:20]
		case 2:
			for i := 5; i <= 7; i++ {
				out += sseEvent(i)
			}
			out += "id: 8\nevent: chunk\n"
		default:
			for i := 8; i <= 10; i++ {
				out += sseEvent(i)
			}
		}
		io.WriteString(w, ": connected\n\n"+out)
		w.(http.Flusher).Flush()
		if conn < 3 {
			// Cut: end the connection without the rest.
			hj, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				hj.Close()
			}
			return
		}
		<-r.Context().Done()
	}))
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	s := c.Events(ctx, "wf", 0)
	defer s.Close()
	var seqs []int64
	for len(seqs) < 10 {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("after %v: %v", seqs, err)
		}
		seqs = append(seqs, ev.Seq)
		switch p := ev.Payload.(type) {
		case *sdk.ChunkData:
			if ev.Type != sdk.EventChunk || p.Text != fmt.Sprintf("t%d", ev.Seq) {
				t.Fatalf("event %d: %+v", ev.Seq, p)
			}
		case *sdk.ToolCallData:
			if p.CallID != fmt.Sprintf("c%d", ev.Seq) || p.Tool != "searchKnowledge" || string(p.Arguments) != `{"q":"x"}` {
				t.Fatalf("event %d: %+v", ev.Seq, p)
			}
		case *sdk.ToolResultData:
			if !p.OK || p.DurationMS != ev.Seq {
				t.Fatalf("event %d: %+v", ev.Seq, p)
			}
		default:
			t.Fatalf("event %d: payload %T", ev.Seq, p)
		}
	}
	if fmt.Sprint(seqs) != "[1 2 3 4 5 6 7 8 9 10]" {
		t.Fatalf("events %v", seqs)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(asked) != "[ 4 7]" || s.Reconnects() != 2 || s.LastEventID() != 10 {
		t.Fatalf("Last-Event-ID sent %q, %d reconnects, last %d", asked, s.Reconnects(), s.LastEventID())
	}
}

// TestEventsRefusedIsNotRetried: a stream the server refuses (404) is an
// *sdk.Error at once; one that keeps dropping gives up after MaxFailures.
func TestEventsRefusedIsNotRetried(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	c := testClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Path]++
		mu.Unlock()
		if strings.Contains(r.URL.Path, "missing") {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(404)
			io.WriteString(w, `{"type":"about:blank","title":"Not Found","status":404}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": connected\n\n")
	}))
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var e *sdk.Error
	if _, err := c.Events(ctx, "missing", 0).Next(); !errors.As(err, &e) || e.Status != 404 {
		t.Fatalf("missing: %v", err)
	}
	s := c.Events(ctx, "dropping", 0)
	s.MaxFailures = 2
	if _, err := s.Next(); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("dropping: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls["/api/v1/workflows/missing/events"] != 1 || calls["/api/v1/workflows/dropping/events"] != 3 {
		t.Fatalf("calls %v", calls)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/sdk"
)

const runAnswer = "The manual says interface attributes are written in square brackets before the interface, for example [object, uuid(...)]; camlidl reads them to decide how values cross between OCaml and C."

// TestRunAgainstServe runs `agenthost run` and the SDK against a real
// serve (built-in plugins, the embedded database) with a scripted model:
// a run that uploads a corpus PDF, waits for its index, has the agent
// search it and streams the answer; a failing round and a refused tool
// set; Ctrl-C stopping the workflow on the server; and the SDK's event
// reader resuming through a proxy that keeps cutting the stream.
func TestRunAgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server with the built-in plugins")
	}
	model := llmtest.New(t)
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "")
	// A model of the built-in price table, so the run costs something.
	t.Setenv("AGENTHOST_MODEL_AGENT", "gpt-4.1-mini")
	model.SetDefault(llmtest.EndpointChat, llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		prompt := ""
		for _, m := range r.Messages {
			if m.Role == "user" {
				prompt += m.Content
			}
		}
		last := r.Messages[len(r.Messages)-1]
		switch {
		case isTitleRequest(r):
			// Named after its first exchange, as a model answers that
			// request (the title is billed to the workflow after its round).
			return llmtest.Reply("Interface attributes in Camlidl")
		case strings.Contains(prompt, "Fail please"):
			return llmtest.Fail(400, "the scripted model refuses")
		case strings.Contains(prompt, "Stream slowly"):
			return llmtest.Reply(runAnswer).WithChunkDelay(15 * time.Millisecond)
		case last.Role != "tool":
			return llmtest.CallTools(llmtest.Call("searchKnowledge", `{"query":"interface attributes","limit":2}`))
		case strings.Contains(prompt, "Take your time"):
			return llmtest.Reply("never sent").WithDelay(hangGuard)
		}
		return llmtest.Reply(runAnswer)
	}))
	data, plugins := t.TempDir(), t.TempDir()
	tc := bootstrapTenant(t, data, plugins, "acme", nil)
	logs := &syncBuffer{}
	base := hostileServer(t, data, logs, plugins)
	// Before serve stops: the client's transport may hold a connection it
	// dialled and never used (Go dials while waiting for a busy one), and
	// fasthttp's Shutdown waits for such a connection instead of closing it,
	// until serve gives up and exits.
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	pdf := testcorpus.Path(t, "pdf", "deb-camlidl-1.04.pdf")
	client, err := sdk.New(base, sdk.WithToken(tc.token))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()

	t.Run("completes", func(t *testing.T) {
		var stdout, stderr syncBuffer
		err := run(ctx, []string{"run", "What does the manual say about interface attributes?", "--file", pdf,
			"--url", base, "--token", tc.token, "--tools", "searchKnowledge", "--tags", "manual"}, &stdout, &stderr)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
		if stdout.String() != runAnswer+"\n" {
			t.Fatalf("stdout %q, want the answer once", stdout.String())
		}
		progress := stderr.String()
		t.Logf("agenthost run printed:\n%s", progress)
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^(uploaded|already there) deb-camlidl-1\.04\.pdf \(file \S+, [\d.]+ KB\)$`),
			regexp.MustCompile(`(?m)^indexed deb-camlidl-1\.04\.pdf$`),
			regexp.MustCompile(`(?m)^workflow \S+ started in workspace ` + tc.workspace + `$`),
			regexp.MustCompile(`(?m)^tool searchKnowledge\(limit=2 query="interface attributes"\) …$`),
			regexp.MustCompile(`(?m)^tool searchKnowledge\(limit=2 query="interface attributes"\) ok \d+(\.\d+)?m?s$`),
			regexp.MustCompile(`(?m)^done in \S+ · 2 rounds · 1 tool calls · CHF \d+\.\d+$`),
		} {
			if !want.MatchString(progress) {
				t.Errorf("stderr has no line matching %s:\n%s", want, progress)
			}
		}
		if strings.Contains(progress, "\r") || strings.Contains(progress, "\033") {
			t.Errorf("terminal controls without a terminal:\n%q", progress)
		}
		// The prompt's message carries the file, and the model saw the
		// search's result.
		wf := regexp.MustCompile(`workflow (\S+) started`).FindStringSubmatch(progress)[1]
		msgs, err := client.ListWorkflowMessages(ctx, wf, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 || msgs[0].Role != "user" || len(msgs[0].Documents) != 1 || msgs[0].Documents[0].Name != "deb-camlidl-1.04.pdf" {
			t.Fatalf("first message %+v", msgs)
		}
		// The cost shown is the workflow's exact cost when the run ended.
		// The conversation's title is a model call of its own, made after
		// the run completed: it is in that cost when it was billed before
		// the command read it. Once the conversation has its title, the
		// trace sums the rounds and the title.
		for {
			w, err := client.GetWorkflow(ctx, wf)
			if err != nil {
				t.Fatal(err)
			}
			if w.Name == "Interface attributes in Camlidl" {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the conversation is still named %q", w.Name)
			case <-time.After(20 * time.Millisecond):
			}
		}
		trace, err := client.GetWorkflowTrace(ctx, wf)
		if err != nil {
			t.Fatal(err)
		}
		var rounds money.Amount
		for _, run := range trace.Runs {
			for _, r := range run.Rounds {
				c, err := money.Parse(r.CostCHF)
				if err != nil {
					t.Fatalf("round %d's cost %q: %v", r.RoundNumber, r.CostCHF, err)
				}
				rounds += c
			}
		}
		total, err := money.Parse(trace.TotalCostCHF)
		if err != nil {
			t.Fatalf("the trace's total %q: %v", trace.TotalCostCHF, err)
		}
		shown := regexp.MustCompile(`(?m)^done in .* · CHF (\S+)$`).FindStringSubmatch(progress)
		if total <= rounds || rounds <= 0 {
			t.Errorf("the trace's total %s, its rounds %s: no title billed beside them", total, rounds)
		}
		if shown == nil {
			t.Errorf("no cost shown")
		} else if got, err := money.Parse(shown[1]); err != nil || (got != rounds && got != total) {
			t.Errorf("cost shown %q, the trace's rounds %s, with the title %s", shown[1], rounds, total)
		}
		files, err := client.ListFiles(ctx, &sdk.ListFilesParams{Workspace: tc.workspace, Tag: []string{"manual"}})
		if err != nil || len(files.Items) != 1 {
			t.Fatalf("files tagged manual: %+v %v", files, err)
		}
	})

	t.Run("upload of unknown length", func(t *testing.T) {
		// A reader that does not tell its size is sent chunked; the upload
		// arrives whole and the requests after it are answered.
		content := []byte(strings.Repeat("A line of notes for the upload of unknown length.\n", 2000))
		// Everything the server sends, over every connection.
		var wire syncBuffer
		dial := (&net.Dialer{}).DialContext
		tapped, err := sdk.New(base, sdk.WithToken(tc.token), sdk.WithHTTPClient(&http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return tapConn{c, &wire}, nil
			},
		}}))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			up, err := tapped.UploadFile(ctx, tc.workspace, sdk.UploadFileRequest{
				File: io.MultiReader(bytes.NewReader(content)), FileName: "notes.txt", NoDedupe: "true", Description: fmt.Sprint(i)})
			if err != nil {
				t.Fatalf("upload %d: %v", i, err)
			}
			if up.Size != int64(len(content)) {
				t.Fatalf("upload %d: %d bytes stored, %d sent", i, up.Size, len(content))
			}
			if _, err := tapped.ListWorkspaces(ctx); err != nil {
				t.Fatalf("after upload %d: %v", i, err)
			}
		}
		// The server read each body whole: nothing left of one was taken
		// for a request of its own.
		if n := strings.Count(wire.String(), "400 Bad Request"); n > 0 {
			t.Fatalf("%d answers 400 on the wire:\n%s", n, wire.String())
		}
	})

	t.Run("failure is an error", func(t *testing.T) {
		var stdout, stderr syncBuffer
		err := run(ctx, []string{"run", "Fail please", "-url", base, "-token", tc.token}, &stdout, &stderr)
		if err == nil || !regexp.MustCompile(`^workflow \S+ failed: .+`).MatchString(err.Error()) {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
	})

	t.Run("refused before uploading", func(t *testing.T) {
		for _, tc2 := range []struct {
			args []string
			want string
		}{
			{[]string{"-tools", "searchKnowledge,noSuchTool"}, "does not offer noSuchTool (its tools: "},
			{[]string{"-workspace", "nope"}, "workspace nope is not one of the token's workspaces: "},
			{[]string{"-token", "ahk_wrong"}, "401"},
			{[]string{"-file", "does-not-exist.pdf"}, "does-not-exist.pdf: no such file"},
		} {
			args := append([]string{"run", "Hello", "-url", base, "-token", tc.token, "-file", pdf}, tc2.args...)
			var stdout, stderr syncBuffer
			err := run(ctx, args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc2.want) {
				t.Errorf("%v: %v, want %q", tc2.args, err, tc2.want)
			}
			if strings.Contains(stderr.String(), "uploaded") {
				t.Errorf("%v: uploaded before refusing:\n%s", tc2.args, stderr.String())
			}
		}
	})

	t.Run("interrupt stops the workflow", func(t *testing.T) {
		runCtx, interrupt := context.WithCancel(ctx)
		defer interrupt()
		var stdout, stderr syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(runCtx, []string{"run", "Take your time", "-url", base, "-token", tc.token}, &stdout, &stderr)
		}()
		// Interrupt once the agent waits for the model after its tool call.
		for !strings.Contains(stderr.String(), ") ok ") {
			select {
			case err := <-done:
				t.Fatalf("run ended early: %v\n%s", err, stderr.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		interrupt()
		err := <-done
		if err == nil || !strings.Contains(err.Error(), "interrupted") {
			t.Fatalf("run: %v", err)
		}
		wf := regexp.MustCompile(`workflow (\S+) started`).FindStringSubmatch(stderr.String())[1]
		got, err := client.GetWorkflow(ctx, wf)
		if err != nil || got.Status != "stopped" {
			t.Fatalf("workflow after the interrupt: %+v %v", got, err)
		}
		if !strings.Contains(stderr.String(), "interrupted: workflow "+wf+" stopped on the server") {
			t.Fatalf("stderr:\n%s", stderr.String())
		}
	})

	t.Run("max cost bounds the round", func(t *testing.T) {
		var stdout, stderr syncBuffer
		err := run(ctx, []string{"run", "Search, please", "-url", base, "-token", tc.token, "-max-cost", "0.000001"}, &stdout, &stderr)
		// The round completes with what was done so far, and says why.
		if err != nil || !strings.Contains(stdout.String(), "budget") ||
			!regexp.MustCompile(`(?m)^done in .* · ended early: budgetExceeded$`).MatchString(stderr.String()) {
			t.Fatalf("run: %v\nstdout %q\n%s", err, stdout.String(), stderr.String())
		}
	})

	t.Run("stopped elsewhere is an error", func(t *testing.T) {
		var stdout, stderr syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"run", "Take your time", "-url", base, "-token", tc.token}, &stdout, &stderr)
		}()
		started := regexp.MustCompile(`workflow (\S+) started`)
		for !strings.Contains(stderr.String(), ") ok ") {
			select {
			case err := <-done:
				t.Fatalf("run ended early: %v\n%s", err, stderr.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		wf := started.FindStringSubmatch(stderr.String())[1]
		if _, err := client.StopWorkflow(ctx, wf); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err == nil || !strings.Contains(err.Error(), "workflow "+wf+" was stopped") {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
	})

	t.Run("events resume through a cutting proxy", func(t *testing.T) {
		wf, err := client.StartWorkflow(ctx, tc.workspace, sdk.StartRequest{Prompt: "Stream slowly, please"})
		if err != nil {
			t.Fatal(err)
		}
		proxy := cuttingProxy(t, strings.TrimPrefix(base, "http://"), 1000)
		cut, err := sdk.New("http://"+proxy, sdk.WithToken(tc.token), sdk.WithHTTPClient(&http.Client{Transport: &http.Transport{}}))
		if err != nil {
			t.Fatal(err)
		}
		through := collect(t, cut.Events(ctx, wf.ID, 0))
		direct := collect(t, client.Events(ctx, wf.ID, 0))
		if len(through.events) != len(direct.events) {
			t.Fatalf("%d events through the proxy, %d directly", len(through.events), len(direct.events))
		}
		for i := range direct.events {
			a, b := through.events[i], direct.events[i]
			if a.Seq != int64(i+1) || a.Seq != b.Seq || a.Type != b.Type || !bytes.Equal(a.Data, b.Data) {
				t.Fatalf("event %d through the proxy %d %s %s, directly %d %s %s", i, a.Seq, a.Type, a.Data, b.Seq, b.Type, b.Data)
			}
		}
		if through.reconnects < 2 {
			t.Fatalf("%d reconnects: the proxy did not cut the stream", through.reconnects)
		}
		var text string
		for _, e := range direct.events {
			if c, ok := e.Payload.(*sdk.ChunkData); ok {
				text += c.Text
			}
		}
		if text != runAnswer {
			t.Fatalf("chunks make %q", text)
		}
		t.Logf("%d events, %d reconnects", len(direct.events), through.reconnects)
	})
}

type collected struct {
	events     []sdk.Event
	reconnects int
}

// collect reads a stream until its round ends.
func collect(t *testing.T, s *sdk.EventStream) collected {
	t.Helper()
	defer s.Close()
	var out collected
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("after %d events: %v", len(out.events), err)
		}
		out.events = append(out.events, ev)
		if ev.Type.Terminal() {
			out.reconnects = s.Reconnects()
			return out
		}
	}
}

// cuttingProxy forwards TCP connections to addr and closes each after
// limit bytes of the server's answer (headers included), wherever that
// falls: mostly inside an event.
func cuttingProxy(t *testing.T, addr string, limit int64) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(s, c); s.Close() }()
			go func() { defer wg.Done(); io.CopyN(c, s, limit); c.Close(); s.Close() }()
		}
	}()
	return ln.Addr().String()
}

// TestRunDisplayOnATerminal: on a terminal the progress is one status line
// redrawn in place, cleared before answer text and lasting lines.
func TestRunDisplayOnATerminal(t *testing.T) {
	var out, errOut bytes.Buffer
	d := newRunDisplay(&out, &errOut, true)
	ev := func(typ sdk.EventType, p any) {
		raw, _ := json.Marshal(p)
		d.event(sdk.Event{Type: typ, Data: raw, Payload: p})
	}
	ev(sdk.EventStatus, &sdk.StatusData{Status: "running", Label: "round 1"})
	ev(sdk.EventToolCall, &sdk.ToolCallData{CallID: "c1", Tool: "webfetch", Arguments: json.RawMessage(`{"url":"https://example.org/` + strings.Repeat("x", 80) + `"}`)})
	d.tick()
	ev(sdk.EventToolResult, &sdk.ToolResultData{CallID: "c1", Tool: "webfetch", OK: false, ErrorCode: "timeout", Error: "no answer", DurationMS: 1500})
	ev(sdk.EventAgentProgress, &sdk.AgentProgressData{Round: 1, MaxRounds: 10, CostCHF: "0.0125"})
	ev(sdk.EventChunk, &sdk.ChunkData{MessageID: "m1", Text: "Hello "})
	ev(sdk.EventMessage, &sdk.Message{ID: "m1", Role: "assistant", Content: "Hello world"})
	ev(sdk.EventComplete, &sdk.EndData{Reason: "done"})
	d.finish()
	if out.String() != "Hello world\n" {
		t.Fatalf("stdout %q", out.String())
	}
	progress := errOut.String()
	for _, want := range []string{
		"\r\033[K⠋ round 1 · webfetch ",
		"⠙ round 1 · webfetch",
		"\r\033[Ktool webfetch(url=\"https://example.org/xxx",
		"…) error 1.5s: timeout: no answer\n",
		"CHF 0.0125",
	} {
		if !strings.Contains(progress, want) {
			t.Errorf("stderr lacks %q:\n%q", want, progress)
		}
	}
	for _, line := range strings.Split(progress, "\r\033[K") {
		if n := len([]rune(strings.TrimSuffix(line, "\n"))); !strings.Contains(line, "\n") && n > runStatusWidth {
			t.Errorf("status line of %d runes: %q", n, line)
		}
	}
	if !strings.HasSuffix(progress, "\r\033[K") {
		t.Errorf("status line left on the terminal: %q", progress)
	}
}

// TestRunArguments: bad arguments are refused before anything is sent.
func TestRunArguments(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "want a prompt"},
		{[]string{"  "}, "want a prompt"},
		{[]string{"one", "two"}, `want one prompt, got 2 (quote it: agenthost run "one two")`},
		{[]string{"hi", "-token", ""}, "no API token"},
		{[]string{"hi", "-file", dir}, "is not a regular file"},
		{[]string{"hi", "-file", dir + "/missing.pdf"}, "missing.pdf: no such file"},
		{[]string{"hi", "-max-cost", "-1"}, "want an amount of CHF"},
		{[]string{"hi", "-url", "localhost:8080"}, "want http:// or https://"},
		{[]string{"hi", "-nosuch"}, "-nosuch"},
	} {
		t.Setenv("AGENTHOST_TOKEN", "ahk_x")
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"run"}, c.args...), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"run", "-h"}, &stdout, &stderr); err != nil || !strings.Contains(stderr.String(), "usage: agenthost run") {
		t.Errorf("-h: %v %q", err, stderr.String())
	}
}

// tapConn copies what a connection reads into w.
type tapConn struct {
	net.Conn
	w io.Writer
}

func (c tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.w.Write(p[:n])
	return n, err
}

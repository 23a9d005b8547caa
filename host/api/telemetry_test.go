package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agenthost/agenthost/host/agenttrace"
	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// otlpReceiver is an OTLP/HTTP trace receiver (protobuf encoding, as the
// OTLP specification defines for POST /v1/traces) that keeps every span.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	// resources holds each span's resource attributes, by span id.
	resources map[string]map[string]string
	srv       *httptest.Server
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{resources: map[string]map[string]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces with application/x-protobuf", http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(req.Body)
		var msg coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range msg.ResourceSpans {
			res := map[string]string{}
			for _, kv := range rs.GetResource().GetAttributes() {
				res[kv.Key] = kv.Value.GetStringValue()
			}
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
				for _, sp := range ss.Spans {
					r.resources[string(sp.SpanId)] = res
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// spanAttr is a span's string attribute.
func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// TestTraceExported: a scripted run exported to an OTLP endpoint has one
// span per run, round, model call and tool call, each with the right
// parent and the workflow's id, and the HTTP request that started it is a
// server span; every span's resource names the service's instance and
// version; health checks and metric scrapes make no span.
func TestTraceExported(t *testing.T) {
	recv := newOTLPReceiver(t)
	ts := server(t, func(o *serverOptions) { o.otlp = recv.srv.URL })
	ts.model.Script(
		llmtest.CallTools(llmtest.Call("lookup", lookup("alpha", 0)), llmtest.Call("lookup", lookup("beta", 0))),
		llmtest.Reply("Done."),
	)
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"trace me"}`)
	if _, end := waitDone(t, ts, w.ID); !strings.Contains(end, `"completed"`) {
		t.Fatalf("run ended %s", end)
	}
	for _, path := range []string{"/healthz", "/status", "/metrics"} {
		resp, err := http.Get(strings.TrimSuffix(ts.base, "/api/v1") + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if err := ts.tel.Shutdown(context.Background()); err != nil { // flushes the batch
		t.Fatal(err)
	}
	recv.mu.Lock()
	spans := recv.spans
	recv.mu.Unlock()
	byName := map[string][]*tracepb.Span{}
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		byID[string(s.SpanId)] = s
	}
	parent := func(s *tracepb.Span) string {
		if p := byID[string(s.ParentSpanId)]; p != nil {
			return p.Name
		}
		return ""
	}
	runs, rounds, models, tools := byName["agent.run"], byName["agent.round"], byName["model.agent"], byName["tool lookup"]
	if len(runs) != 1 || len(rounds) != 2 || len(models) != 2 || len(tools) != 2 {
		names := []string{}
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("spans %v: want 1 run, 2 rounds, 2 model calls, 2 tool calls", names)
	}
	for _, r := range rounds {
		if string(r.ParentSpanId) != string(runs[0].SpanId) {
			t.Errorf("round span's parent is %q, want the run", parent(r))
		}
	}
	for _, s := range append(models, tools...) {
		if parent(s) != "agent.round" || string(s.TraceId) != string(runs[0].TraceId) {
			t.Errorf("%s span's parent is %q, want a round of the run's trace", s.Name, parent(s))
		}
	}
	// Both tool calls ran in round 1, the answer came in round 2.
	if string(tools[0].ParentSpanId) != string(tools[1].ParentSpanId) {
		t.Error("the round's two tool calls have different parents")
	}
	var server []*tracepb.Span
	for _, s := range spans {
		if s.Kind == tracepb.Span_SPAN_KIND_SERVER && s.Name == "POST /api/v1/workspaces/:ws/workflows" {
			server = append(server, s)
		}
	}
	if len(server) != 1 {
		t.Fatalf("no server span for the request that started the run")
	}
	for _, s := range append(append(append(runs, rounds...), models...), tools...) {
		if got := spanAttr(s, "agenthost.workflow.id"); got != w.ID {
			t.Errorf("%s span: workflow id %q, want %q", s.Name, got, w.ID)
		}
	}
	for _, s := range spans {
		res := recv.resources[string(s.SpanId)]
		if res["service.instance.id"] == "" || res["service.version"] == "" || res["service.name"] != "agenthost" {
			t.Errorf("%s span's resource %v lacks the service's instance or version", s.Name, res)
		}
		if route := spanAttr(s, "http.route"); route == "/healthz" || route == "/status" || route == "/metrics" {
			t.Errorf("a health check or scrape was traced: %s", s.Name)
		}
	}
}

// TestMetrics: after a run, /metrics shows it: the run's outcome, its tool
// and model calls, the workflows by state, the HTTP route's latency; a
// client that is not on loopback needs the metrics token.
func TestMetrics(t *testing.T) {
	ts := server(t)
	ts.model.Script(
		llmtest.CallTools(llmtest.Call("lookup", lookup("alpha", 0)), llmtest.Call("formatDisk", `{}`)),
		llmtest.Reply("Done."),
	)
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"measure me"}`)
	waitDone(t, ts, w.ID)
	resp, err := http.Get(strings.TrimSuffix(ts.base, "/api/v1") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, raw)
	}
	body := string(raw)
	for _, want := range []string{
		`agenthost_agent_runs_total{outcome="completed"} 1`,
		`agenthost_agent_rounds_total 2`,
		`agenthost_model_calls_total{operation="agent",result="ok"} 2`,
		`agenthost_tool_calls_total{result="ok",tool="lookup"} 1`,
		`agenthost_tool_calls_total{result="unknown_tool",tool="(unknown)"} 1`,
		`agenthost_workflows{state="completed"} 1`,
		`agenthost_knowledge_files 0`,
		`agenthost_plugin_pool_wait_seconds_count{tool="lookup"} 1`,
		`agenthost_http_request_seconds_count{method="POST",route="/api/v1/workspaces/:ws/workflows",status="202"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s\n%s", want, grep(body, "http_request_seconds_count"))
		}
	}
	if regexp.MustCompile(`tool="formatDisk"`).MatchString(body) {
		t.Error("a hallucinated tool name became a label value (unbounded cardinality)")
	}
}

func grep(body, s string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestAgentTrace: GET /workflows/:id/trace reconstructs the run: its
// rounds with the model's tokens and cost as the model server reported
// them, each tool call with its arguments and result.
func TestAgentTrace(t *testing.T) {
	ts := server(t, pricedModel)
	ts.model.Script(
		llmtest.CallTools(llmtest.Call("lookup", lookup("alpha", 0)), llmtest.Call("formatDisk", `{"drive":"C"}`)).WithUsage(1000, 20),
		llmtest.Reply("Done.").WithUsage(3000, 40),
	)
	w := startWorkflow(t, ts, ts.alice, `{"prompt":"trace me"}`)
	waitDone(t, ts, w.ID)
	var tr agenttrace.Trace
	getJSON(t, ts, "/workflows/"+w.ID+"/trace", &tr)
	if tr.TotalRuns != 1 || tr.TotalRounds != 2 || tr.TotalToolCalls != 2 || len(tr.Runs) != 1 || tr.Runs[0].Status != "completed" ||
		tr.Runs[0].CompletedAt == nil || len(tr.Runs[0].Rounds) != 2 {
		t.Fatalf("trace %+v", tr)
	}
	r1, r2 := tr.Runs[0].Rounds[0], tr.Runs[0].Rounds[1]
	// 1000 × 2.50 + 20 × 10 millionths: 0.0027; 3000 × 2.50 + 40 × 10: 0.0079.
	if r1.RoundNumber != 1 || r1.AIModel != "priced" || r1.InputTokens != 1000 || r1.OutputTokens != 20 || r1.CostCHF != "0.0027" ||
		r2.RoundNumber != 2 || r2.InputTokens != 3000 || r2.OutputTokens != 40 || r2.CostCHF != "0.0079" || len(r2.ToolCalls) != 0 {
		t.Fatalf("rounds %+v %+v", r1, r2)
	}
	if len(r1.ToolCalls) != 2 || r1.ToolCalls[0].ToolName != "lookup" || !r1.ToolCalls[0].Success ||
		r1.ToolCalls[1].ToolName != "formatDisk" || r1.ToolCalls[1].Success || r1.ToolCalls[1].ErrorCode != "unknown_tool" ||
		string(r1.ToolCalls[1].Args) != `{"drive":"C"}` {
		t.Fatalf("tool calls %+v", r1.ToolCalls)
	}
	// Bob may not read alice's trace.
	if status, _, _ := do(t, ts.base, call{"GET", "/workflows/" + w.ID + "/trace", ts.bob, "", nil}); status != 404 {
		t.Fatalf("bob reading alice's trace: %d, want 404", status)
	}
}

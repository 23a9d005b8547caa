package llm_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
)

// meter records every usage with the attribution it arrived with.
type meter struct {
	mu  sync.Mutex
	got []metered
}

type metered struct {
	usage     modeluse.Usage
	attr      llm.Attribution
	cancelled bool // the context the meter got was already cancelled
}

func (m *meter) Record(ctx context.Context, u modeluse.Usage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, metered{usage: u, attr: llm.AttributionFrom(ctx), cancelled: ctx.Err() != nil})
	return nil
}

func (m *meter) records() []metered {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]metered(nil), m.got...)
}

// fastRetry keeps backoff short so that tests measure policy, not sleep.
var fastRetry = llm.RetryConfig{Attempts: 2, BaseDelay: 10 * time.Millisecond, MaxDelay: 40 * time.Millisecond, MaxRetryAfter: 5 * time.Second}

// setup is a client on one scripted server. Providers "a" and "b" both
// point at it (so one script orders the requests of both), "a" with
// timeoutA. chains maps operations to model names, "name" on provider a and
// "b:name" on provider b.
type setup struct {
	srv    *llmtest.Server
	client *llm.Client
	meter  *meter
	waits  *waits
}

func newSetup(t *testing.T, timeoutA time.Duration, chains map[modeluse.Operation][]llm.ModelConfig, opts ...llmtest.Option) setup {
	t.Helper()
	srv := llmtest.New(t, append([]llmtest.Option{llmtest.WithAPIKey("sk-test")}, opts...)...)
	cfg := llm.Config{
		Providers: []llm.ProviderConfig{
			{Name: "a", BaseURL: srv.URL(), APIKey: "sk-test", Timeout: timeoutA},
			{Name: "b", BaseURL: srv.URL(), APIKey: "sk-test", Timeout: 5 * time.Second},
		},
		Models: chains,
		Retry:  fastRetry,
	}
	m := &meter{}
	w := &waits{}
	c, err := llm.New(cfg, m, slog.New(w))
	if err != nil {
		t.Fatal(err)
	}
	return setup{srv: srv, client: c, meter: m, waits: w}
}

// agentChain is the usual two-model chain: m-a on provider a, m-b on b,
// with prices of 2 and 8 CHF (a) and 1 and 4 CHF (b) per million tokens.
func agentChain() map[modeluse.Operation][]llm.ModelConfig {
	return map[modeluse.Operation][]llm.ModelConfig{
		modeluse.OpAgent: {
			{Provider: "a", Model: "m-a", ContextWindow: 32000, InputCHFPer1M: 2, OutputCHFPer1M: 8},
			{Provider: "b", Model: "m-b", ContextWindow: 16000, InputCHFPer1M: 1, OutputCHFPer1M: 4},
		},
	}
}

func models(reqs []llmtest.ChatRequest) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Model)
	}
	return out
}

func userMsg(s string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: s}} }

// waits is a log handler keeping the wait the client announces before each
// retry: what the retry policy decided, asserted without timing the test.
type waits struct {
	mu  sync.Mutex
	got []time.Duration
}

func (w *waits) Enabled(context.Context, slog.Level) bool { return true }
func (w *waits) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *waits) WithGroup(string) slog.Handler            { return w }

func (w *waits) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "llm: retrying" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "wait" {
			w.mu.Lock()
			w.got = append(w.got, a.Value.Duration())
			w.mu.Unlock()
		}
		return true
	})
	return nil
}

func (w *waits) list() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.got...)
}

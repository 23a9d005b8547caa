package billing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/billing/ledger"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// fakeRunner runs one tool of one plugin, limited to a minute, returning
// res; it records whether it ran.
type fakeRunner struct {
	res wasm.Result
	ran *bool
}

func (fakeRunner) Tools() []wasm.ToolInfo {
	return []wasm.ToolInfo{{Plugin: "ledger", Tool: manifest.Tool{Name: "book"}}}
}

func (f fakeRunner) Call(context.Context, string, []byte, *wasm.CallOptions) wasm.Result {
	*f.ran = true
	return f.res
}

// TestHoldsSettleOrRelease: whatever becomes of a billable call (answered,
// failed, cancelled, refused; a model call, an embedding batch, a tool
// call), its hold ends with it: nothing stays reserved, and what was spent
// is recorded once.
func TestHoldsSettleOrRelease(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t)
	cfg := llm.Config{
		Providers: []llm.ProviderConfig{{Name: "test", BaseURL: srv.URL(), Timeout: 10 * time.Second}},
		Models: map[modeluse.Operation][]llm.ModelConfig{
			modeluse.OpAgent:     {{Provider: "test", Model: "scripted", InputCHFPer1M: 10, OutputCHFPer1M: 10}},
			modeluse.OpEmbedding: {{Provider: "test", Model: "embed", InputCHFPer1M: 10}},
		},
		Retry: llm.RetryConfig{Attempts: 1},
	}
	prices := billing.Prices{Models: cfg.Prices(), PluginPerHour: 36 * money.CHF}
	meter := billing.NewMeter(db, prices, nil).WithBudget(billing.BudgetConfig{Overdraft: 10 * money.Rappen})
	client, err := llm.New(cfg, meter, nil)
	if err != nil {
		t.Fatal(err)
	}
	chat := func(ctx context.Context) error {
		_, err := client.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "hello"}}}, nil)
		return err
	}
	tool := func(res wasm.Result) func(context.Context) error {
		return func(ctx context.Context) error {
			ran := false
			out := meter.MeteredRunner(fakeRunner{res: res, ran: &ran}).Call(ctx, "book", []byte(`{}`), nil)
			if out.Error != nil && out.Error.Code == wasm.CodeSpendingLimit {
				if ran {
					t.Error("a refused tool call ran")
				}
				return fmt.Errorf("%w: %s", llm.ErrRefused, out.Error.Message)
			}
			return nil
		}
	}
	for _, c := range []struct {
		name   string
		credit money.Amount
		script []llmtest.Step
		call   func(ctx context.Context) error
		// spent: whether the call is recorded at a cost; refused: whether
		// it is refused before anything is sent or run.
		spent, refused bool
	}{
		{"chat answered", money.CHF, []llmtest.Step{llmtest.Reply("hi")}, chat, true, false},
		{"chat failed", money.CHF, []llmtest.Step{llmtest.Fail(500, "down")}, chat, false, false},
		{"chat cancelled", money.CHF, nil, func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			// The provider takes the request, the caller hangs up.
			srv.Script(llmtest.Decide(func(llmtest.ChatRequest) llmtest.Step { cancel(); return llmtest.Reply("late").WithDelay(time.Minute) }))
			return chat(ctx)
		}, false, false},
		{"chat refused", 0, nil, chat, false, true},
		{"embedding failed", money.CHF, nil, func(ctx context.Context) error {
			srv.ScriptEndpoint(llmtest.EndpointEmbeddings, llmtest.Fail(500, "down"))
			_, _, err := client.Embed(ctx, []string{"a text"})
			return err
		}, false, false},
		{"embedding answered", money.CHF, nil, func(ctx context.Context) error {
			_, _, err := client.Embed(ctx, []string{"a text"})
			return err
		}, true, false},
		{"tool ran", money.CHF, nil, tool(wasm.Result{OK: true, Stats: wasm.Stats{Duration: time.Second}}), true, false},
		{"tool unavailable", money.CHF, nil, tool(wasm.Result{Error: &wasm.Error{Code: wasm.CodeUnavailable}}), false, false},
		// The default time limit (30 s) at CHF 36 an hour is CHF 0.30:
		// more than the credit and the overdraft leave.
		{"tool refused", 10 * money.Rappen, nil, tool(wasm.Result{OK: true, Stats: wasm.Stats{Duration: time.Second}}), false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tn, err := db.CreateTenant(ctx, c.name)
			if err != nil {
				t.Fatal(err)
			}
			credit := c.credit
			if err := db.SetTenantLimits(ctx, tn.ID, ledger.Limits{Credit: &credit}); err != nil {
				t.Fatal(err)
			}
			srv.Script(c.script...)
			sent := len(srv.Requests())
			cctx := llm.WithAttribution(ctx, llm.Attribution{TenantID: tn.ID, Purpose: "test"})
			cctx = toolcall.With(cctx, toolcall.Caller{Principal: tenancy.Principal{TenantID: tn.ID}})
			err = c.call(cctx)
			b, berr := db.TenantBudget(ctx, tn.ID, time.Now())
			if berr != nil {
				t.Fatal(berr)
			}
			if b.Reserved != 0 {
				t.Errorf("CHF %s still held after the call (%v)", b.Reserved, err)
			}
			if (b.SpentTotal > 0) != c.spent {
				t.Errorf("CHF %s spent (%v), want spent=%v", b.SpentTotal, err, c.spent)
			}
			if refused := errors.Is(err, llm.ErrRefused); refused != c.refused {
				t.Errorf("error %v, want refused=%v", err, c.refused)
			}
			if c.refused && len(srv.Requests()) != sent {
				t.Errorf("a refused call reached the provider")
			}
		})
	}
}

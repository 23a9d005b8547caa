package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

func TestDescribeShape(t *testing.T) {
	var csv, md, pages strings.Builder
	csv.WriteString("a,b,c\n")
	for i := range 50 {
		fmt.Fprintf(&csv, "%d,\"x, y\",%d\n", i, i*2)
	}
	for i := range 4 {
		fmt.Fprintf(&md, "# Part %d\ntext\n## Detail\nmore\n", i)
	}
	for i := range 3 {
		if i > 0 {
			pages.WriteString("\f")
		}
		fmt.Fprintf(&pages, "page %d text\n", i+1)
	}
	tests := []struct {
		name, text string
		want       []string
		mime       string
	}{
		{"JSON array", `[{"a":[1,2]},{"a":"x,y"},3]`, []string{"a JSON array of 3 entries"}, "application/json"},
		{"empty JSON array", `[]`, []string{"a JSON array of 0 entries"}, "application/json"},
		{"JSON object", `{"items":[{"id":1},{"id":2},{"id":3}],"next":"c,d","total":3,"empty":[]}`,
			[]string{`a JSON object with 4 keys: "items" (an array of 3 entries), "next", "total", "empty" (an array of 0 entries)`}, "application/json"},
		{"broken JSON is text", `[1,2`, []string{"1 lines"}, "text/plain"},
		{"CSV", csv.String(), []string{"a table of 51 rows (the first a header) and 3 columns", "51 lines"}, "text/csv"},
		{"Markdown", md.String(), []string{"8 sections (Markdown headings)", "16 lines"}, "text/markdown"},
		{"pages", pages.String(), []string{"3 pages (form-feed separated)"}, "text/plain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := describeShape(tc.text)
			for _, w := range tc.want {
				if !strings.Contains(s.summary, w) {
					t.Errorf("shape %q does not say %q", s.summary, w)
				}
			}
			if !strings.Contains(s.summary, fmt.Sprintf("%d bytes", len(tc.text))) || s.mime != tc.mime {
				t.Errorf("shape %q, type %s (want %s)", s.summary, s.mime, tc.mime)
			}
		})
	}
}

// copyKeeper copies what it keeps, as a store that writes it does.
type copyKeeper struct{ kept [][]byte }

func (k *copyKeeper) KeepResult(_ context.Context, _, name, _ string, data []byte) (KeptResult, error) {
	k.kept = append(k.kept, append([]byte(nil), data...))
	return KeptResult{Ref: "docItem:0190c0de-0000-7000-8000-000000000001", FileID: "f1", Name: name}, nil
}

type noTools struct{}

func (noTools) Tools() []tools.Tool              { return nil }
func (noTools) Lookup(string) (tools.Tool, bool) { return tools.Tool{}, false }
func (noTools) Call(context.Context, string, []byte, *wasm.CallOptions) wasm.Result {
	return wasm.Result{}
}

// BenchmarkResultFit reports agent.result.fit.ms: a 10 MB tool result
// (CSV rows) measured against a 128k-token window, kept as a document and
// turned into the head and shape the model gets.
func BenchmarkResultFit(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("invoice,customer,amount,currency\n")
	for i := 1; sb.Len() < 10<<20; i++ {
		fmt.Fprintf(&sb, "INV-%07d,Customer %d AG,%d.%02d,CHF\n", i, i%977, i%10000, i%100)
	}
	text := sb.String()
	keeper := &copyKeeper{}
	ag := New(nil, Config{Results: keeper}, nil)
	r := &run{a: ag, cfg: ag.cfg, tools: noTools{}, info: llm.ModelInfo{Name: "gpt-4o", ContextWindow: 128000},
		tokens: newTokenCount("gpt-4o", nil), fitted: map[string]bool{}}
	r.msgs = []llm.Message{{Role: "system", Content: "You are the agent."}, {Role: "user", Content: "Sum the invoices."}}
	limit := r.resultRoom(1)
	r.fit(context.Background(), call{id: "c0", name: "exportInvoices"}, text, limit) // tokenizer tables
	var per []time.Duration
	for i := 0; i < max(b.N, 10); i++ {
		start := time.Now()
		f := r.fit(context.Background(), call{id: "c1", name: "exportInvoices"}, text, limit)
		per = append(per, time.Since(start))
		if !f.over || len(f.text) > 64<<10 || !strings.Contains(f.text, "docItem:") {
			b.Fatalf("fitted: over %v, %d bytes", f.over, len(f.text))
		}
		keeper.kept = keeper.kept[:0]
	}
	figure.Report("agent.result.fit.ms", figure.Millis(figure.Percentile(per, 50)), "ms")
}

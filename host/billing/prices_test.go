package billing_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// TestPricesStoredForm: a price table keeps its amounts as integers of
// nano-francs, and its version (the digest of that form) is the one it had
// before money.Amount marshalled as francs: records priced then still name
// their table. The form reads back to the same table.
func TestPricesStoredForm(t *testing.T) {
	p := billing.Prices{Models: []llm.ModelPrice{{Operation: modeluse.OpAgent, Provider: "p", Model: "m",
		Input: money.FromCHF(0.15), CachedInput: money.FromCHF(0.075), Output: 2 * money.CHF, PerImage: 4 * money.Rappen}},
		PluginPerHour: money.FromCHF(0.36)}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"models":[{"operation":"agent","provider":"p","model":"m","inputPer1M":150000000,"cachedInputPer1M":75000000,"outputPer1M":2000000000,"perImage":40000000}],"pluginPerHour":360000000}`
	if string(b) != want {
		t.Errorf("stored form:\n got %s\nwant %s", b, want)
	}
	if v := p.Version(); v != "8a6bd037f0a2d5e6" {
		t.Errorf("Version() = %s, want 8a6bd037f0a2d5e6 (the digest before)", v)
	}
	var back billing.Prices
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, p) {
		t.Errorf("read back: %+v, %v", back, err)
	}
}

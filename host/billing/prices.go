package billing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/money"
)

// Prices is one version of the price table: every configured model's
// prices per operation (from the model configuration, built-in list prices
// applied) and the price of plugin compute time. A record keeps the version
// it was priced with, so changing prices never changes old records.
type Prices struct {
	Models []llm.ModelPrice `json:"models"`
	// PluginPerHour prices the wall time of plugin runs (tool calls); zero
	// records plugin runs at no cost, still as transactions.
	PluginPerHour money.Amount `json:"pluginPerHour"`
}

// pricesJSON is Prices as the store keeps it, its amounts in nano-francs
// (llm.ModelPrice marshals so too): Version is the digest of this form.
type pricesJSON struct {
	Models        []llm.ModelPrice `json:"models"`
	PluginPerHour int64            `json:"pluginPerHour"`
}

// MarshalJSON writes the table in its stored form.
func (p Prices) MarshalJSON() ([]byte, error) {
	return json.Marshal(pricesJSON{Models: p.Models, PluginPerHour: int64(p.PluginPerHour)})
}

// UnmarshalJSON reads the stored form.
func (p *Prices) UnmarshalJSON(b []byte) error {
	var w pricesJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Prices{Models: w.Models, PluginPerHour: money.Amount(w.PluginPerHour)}
	return nil
}

// Version is the digest of the table's canonical JSON: equal tables have
// equal versions, on any host.
func (p Prices) Version() string {
	b, _ := json.Marshal(p) // fixed types: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Save keeps this version's body in the store, so reports can say what a
// record's prices were.
func (p Prices) Save(ctx context.Context, s Store) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("billing: prices: %w", err)
	}
	if err := s.SavePriceVersion(ctx, p.Version(), b); err != nil {
		return fmt.Errorf("billing: prices: %w", err)
	}
	return nil
}

// computeCost prices d of plugin wall time.
func (p Prices) computeCost(d time.Duration) money.Amount {
	return money.Per(d.Microseconds(), p.PluginPerHour, int64(time.Hour/time.Microsecond))
}

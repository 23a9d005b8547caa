package telemetry_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/telemetry"
)

// TestIngestPhases: each phase an ingester reports becomes a sample of
// agenthost_ingest_phase_seconds with its phase label.
func TestIngestPhases(t *testing.T) {
	tel, err := telemetry.New(context.Background(), telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tel.ObserveIngestPhase("extract", 1500*time.Millisecond)
	tel.ObserveIngestPhase("extract", 500*time.Millisecond)
	tel.ObserveIngestPhase("chunk", 20*time.Millisecond)
	families, err := tel.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]float64{}
	for _, f := range families {
		if f.GetName() != "agenthost_ingest_phase_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			h := m.GetHistogram()
			got[m.GetLabel()[0].GetValue()] = [2]float64{float64(h.GetSampleCount()), h.GetSampleSum()}
		}
	}
	want := map[string][2]float64{"extract": {2, 2}, "chunk": {1, 0.02}}
	for phase, w := range want {
		if g := got[phase]; g[0] != w[0] || g[1] < w[1]-1e-9 || g[1] > w[1]+1e-9 {
			t.Errorf("phase %s: count, sum = %v, want %v", phase, g, w)
		}
	}
}

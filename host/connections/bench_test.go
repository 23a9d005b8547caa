package connections_test

import (
	"context"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/figure"
)

// BenchmarkConnectorEgressOverhead reports connector.egress.overhead.ms:
// what a request with host-attached credentials (load the connection,
// open its sealed secret, attach it, scrub the answer) costs over the
// same request through the same egress client without them, to a loopback
// server; medians of alternating requests.
func BenchmarkConnectorEgressOverhead(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	c := e.connectOAuth(b, e.alice)
	send := e.send()
	hosts := []string{e.apiHost}
	const n = 400
	var plain, withConn []float64
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := send(ctx, egress.Request{URL: e.api.URL + "/", Headers: map[string]string{"Authorization": "Bearer static-token-1"}}); err != nil {
			b.Fatal(err)
		}
		plain = append(plain, figure.Millis(time.Since(t0)))
		t0 = time.Now()
		resp, err := e.svc.Do(ctx, e.alice, c.ID, "acme", hosts, egress.Request{URL: e.api.URL + "/"}, send)
		if err != nil || resp.Status != 200 {
			b.Fatalf("%v %v", resp, err)
		}
		withConn = append(withConn, figure.Millis(time.Since(t0)))
	}
	figure.Report("connector.egress.overhead.ms", figure.Median(withConn)-figure.Median(plain), "ms")
}

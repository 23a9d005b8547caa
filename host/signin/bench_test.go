package signin_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/signin"
)

// BenchmarkSignIn measures a whole OpenID Connect sign-in against the real
// provider in process: from the request that redirects to the provider,
// through its login form, the code exchange and the ID token's checks, to
// the session cookie (the embedded SQLite store), 25 times per iteration.
// The discovery document
// and keys are fetched once, as on a running server. It reports the
// median as auth.oidc.signin.ms.
func BenchmarkSignIn(b *testing.B) {
	e := newEnv(b, openSQLite(b), signin.JustInTime)
	start := e.base + "/auth/oidc/idp"
	if status, body := e.browser().signIn(start, "ben", "pw"); status != 200 {
		b.Fatalf("warm-up: %d %s", status, body)
	}
	var took []time.Duration
	b.ResetTimer()
	for b.Loop() {
		// Enough sign-ins for a median even at -benchtime 1x (make bench).
		for range 25 {
			br := e.browser()
			t0 := time.Now()
			status, body := br.signIn(start, "ben", "pw")
			took = append(took, time.Since(t0))
			if status != 200 || !strings.Contains(body, "refresh") {
				b.Fatalf("sign-in: %d %s", status, body)
			}
		}
	}
	b.StopTimer()
	figure.Report("auth.oidc.signin.ms", figure.Millis(figure.Percentile(took, 50)), "ms")
}

package plugintest

import (
	"context"
	"strings"
	"testing"
)

// Test builds the plugin in dir and runs its fixtures, failing t for every
// fixture that fails (the report is logged): the test a scaffolded plugin
// carries.
func Test(t testing.TB, dir string) {
	t.Helper()
	var out strings.Builder
	rep, err := Run(context.Background(), Options{Dir: dir, Out: &out})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Outcomes {
		if !o.Pass {
			t.Errorf("fixture %s: %s", o.Fixture, o.Why)
		}
	}
}

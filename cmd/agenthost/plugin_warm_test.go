package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginWarmRefusesNoParallelism: -parallel below 1 is refused before
// anything is loaded or compiled, with why.
func TestPluginWarmRefusesNoParallelism(t *testing.T) {
	for _, n := range []string{"0", "-2"} {
		var stdout, stderr bytes.Buffer
		err := pluginWarmCmd(context.Background(), []string{"-cache-dir", filepath.Join(t.TempDir(), "cache"), "-parallel", n}, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "-parallel must be at least 1") {
			t.Errorf("-parallel %s: %v (stderr %q), want a refusal", n, err, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("-parallel %s printed %q", n, stdout.String())
		}
	}
}

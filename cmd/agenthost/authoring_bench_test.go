package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/signature"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// BenchmarkPluginInstallLive measures an install on a running host, from
// the request to the first successful call of the new tool through the API
// (median of several installs, each a new signed build the machine has not
// compiled before; each removed again):
//
//	plugin.install.live.ms   POST /plugins (signature checked, compiled, code
//	                         checked against manifest) to the first call's answer
func BenchmarkPluginInstallLive(b *testing.B) {
	work := b.TempDir()
	data := filepath.Join(work, "data")
	out, stderr, err := run0(b, "admin", "bootstrap", "-data", data, "-tenant", "Bench", "-email", "bench@example.org")
	if err != nil {
		b.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	tenant := regexp.MustCompile(`(?m)^tenant (\S+)$`).FindStringSubmatch(out)
	creds := tokenLine.FindStringSubmatch(out)
	if tenant == nil || creds == nil {
		b.Fatalf("bootstrap printed %q", out)
	}
	ws, token := creds[1], creds[2]
	if _, stderr, err := run0(b, "admin", "tools", "-data", data, "-workspace", ws, "-set", "all"); err != nil {
		b.Fatalf("tools: %v\n%s", err, stderr)
	}
	pub, priv, err := signature.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "bench.pub"), signature.EncodePublic(pub), 0o644); err != nil {
		b.Fatal(err)
	}
	base := serveInProcess(b, &syncBuffer{}, "-data", data, "-trust", filepath.Join(work, "bench.pub"), "-plugin-admins", tenant[1])
	echo := wasmtest.Module(b, "echo")
	m, err := manifest.Read(echo)
	if err != nil {
		b.Fatal(err)
	}
	// A run's builds differ from every earlier run's: none is in the
	// machine's compile cache.
	stamp := time.Now().UnixNano()
	do := func(method, path string, body []byte) (int, []byte) {
		req, _ := http.NewRequest(method, base+"/api/v1"+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		return resp.StatusCode, buf.Bytes()
	}
	var ms []float64
	for i := range 5 {
		m.Version = fmt.Sprintf("1.%d.%d", i, stamp)
		mod, err := manifest.Embed(echo, m)
		if err != nil {
			b.Fatal(err)
		}
		if mod, err = signature.Sign(mod, priv); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if st, body := do("POST", "/plugins", mod); st != http.StatusCreated {
			b.Fatalf("install: %d %s", st, body)
		}
		st, body := do("POST", "/workspaces/"+ws+"/tools/echo", []byte(`{"text":"hi"}`))
		var r struct {
			OK   bool   `json:"ok"`
			Text string `json:"text"`
		}
		if st != http.StatusOK || json.Unmarshal(body, &r) != nil || !r.OK || r.Text != "hi" {
			b.Fatalf("first call: %d %s", st, body)
		}
		ms = append(ms, figure.Millis(time.Since(t0)))
		if st, body := do("DELETE", "/plugins/echo", nil); st != http.StatusOK {
			b.Fatalf("remove: %d %s", st, body)
		}
	}
	figure.Report("plugin.install.live.ms", figure.Median(ms), "ms")
}

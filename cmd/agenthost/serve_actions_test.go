package main

// Legacy actions through `serve`: the built-in legacyactions plugin and the
// test plugins of kind actions, called over HTTP by two tenants. The
// adapter is wired: an action's documents become the calling tenant's
// files, a hostile result stores nothing, and the server goes on.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

func TestServeLegacyActions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	data := t.TempDir()
	plugins := pluginsDir(t, map[string][]byte{
		"actionsdemo":    wasmtest.Module(t, "actionsdemo"),
		"actionshostile": wasmtest.Module(t, "actionshostile"),
	})
	tools := []string{"context.neutralizeData", "demo.report", "demo.fail", "hostile.named", "hostile.big"}
	a := bootstrapTenant(t, data, plugins, "tenant-a", tools)
	b := bootstrapTenant(t, data, plugins, "tenant-b", tools)
	logs := &syncBuffer{}
	base := hostileServer(t, data, logs, plugins)
	a.base, b.base = base, base

	fileNames := func(tc tenantClient) []string {
		_, body := tc.do(t, http.MethodGet, "/api/v1/files?workspace="+tc.workspace, nil)
		var page struct {
			Items []struct {
				Name string `json:"name"`
			} `json:"items"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatalf("files: %v (%s)", err, body)
		}
		var names []string
		for _, it := range page.Items {
			names = append(names, it.Name)
		}
		slices.Sort(names)
		return names
	}

	t.Run("the workspace offers the dynamicMode actions", func(t *testing.T) {
		_, body := a.do(t, http.MethodGet, "/api/v1/workspaces/"+a.workspace+"/tools", nil)
		for _, want := range []string{`"context.neutralizeData"`, `"demo.report"`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("%s is not offered: %s", want, body)
			}
		}
	})
	t.Run("the built-in neutralizes", func(t *testing.T) {
		r := a.tool(t, "context.neutralizeData", map[string]any{"text": "Sehr geehrte Frau Keller, IBAN CH93 0076 2011 6238 5295 7"})
		if !r.OK || !strings.Contains(r.Text, "Sehr geehrte Frau [NAME_1], IBAN [IBAN_1]") {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("documents become the caller's files", func(t *testing.T) {
		r := a.tool(t, "demo.report", map[string]any{"title": "Q3", "rows": 2})
		if !r.OK || strings.Count(r.Text, "file id: ") != 2 {
			t.Fatalf("%+v", r)
		}
		if got := fileNames(a); !slices.Equal(got, []string{"data.csv", "report.txt"}) {
			t.Errorf("tenant a's files: %v", got)
		}
		if got := fileNames(b); len(got) != 0 {
			t.Errorf("tenant b's files: %v", got)
		}
	})
	t.Run("a failed action is an error result", func(t *testing.T) {
		if r := a.tool(t, "demo.fail", map[string]any{}); r.OK || r.Error.Code != "action_failed" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("hostile results store nothing", func(t *testing.T) {
		if r := b.tool(t, "hostile.named", map[string]any{"name": "../../../etc/cron.d/x"}); r.OK || r.Error.Code != "invalid_output" {
			t.Fatalf("%+v", r)
		}
		// 20 MB: over the plugin's output limit (8 MiB) before the
		// adapter's document limit (16 MiB) is reached.
		if r := b.tool(t, "hostile.big", map[string]any{"bytes": 20000000}); r.OK || r.Error.Code != "output_too_large" {
			t.Fatalf("%+v", r)
		}
		if got := fileNames(b); len(got) != 0 {
			t.Errorf("tenant b's files: %v", got)
		}
		if r := b.tool(t, "context.neutralizeData", map[string]any{"text": "Dear Mr Brown"}); !r.OK || !strings.Contains(r.Text, "Dear Mr [NAME_1]") {
			t.Fatalf("the server after the hostile calls: %+v", r)
		}
	})
}

// plugin inspect shows an actions plugin's actions, and which of them are
// tools (dynamicMode) and which are not.
func TestInspectActions(t *testing.T) {
	file := filepath.Join(t.TempDir(), "actionsdemo.wasm")
	if err := os.WriteFile(file, wasmtest.Module(t, "actionsdemo"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run0(t, "plugin", "inspect", file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"demo.archive             static (not a tool)", "demo.report              dynamic (a tool)"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect does not show %q:\n%s", want, out)
		}
	}
}

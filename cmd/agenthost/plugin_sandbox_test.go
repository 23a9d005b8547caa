package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	asm "github.com/agenthost/agenthost/host/wasm/wasmtest/wasmasm"
)

// `plugin call` and `plugin inspect` apply the checks `serve` applies: the
// manifest's paths are requests, mounts come from the operator, hostile
// code is refused at load.
func TestPluginCallAndInspectShareTheSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("runs plugins")
	}
	dir := t.TempDir()
	snoop := filepath.Join(dir, "snoop.wasm")
	if err := os.WriteFile(snoop, wasmtest.Module(t, "snoop"), 0o644); err != nil {
		t.Fatal(err)
	}
	flagger := filepath.Join(dir, "flagger.wasm")
	if err := os.WriteFile(flagger, wasmtest.HandModule(t, "flagger", wasmtest.Forever(asm.I32Const(0), asm.GlobalSet(0)), nil), 0o644); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared")
	os.MkdirAll(shared, 0o755)
	os.WriteFile(filepath.Join(shared, "note.txt"), []byte("granted"), 0o644)
	cache := []string{"-cache-dir", filepath.Join(dir, "cache")}

	cases := []struct {
		name    string
		args    []string
		wantErr string // "" for success
		wantOut string
	}{
		{"asked paths are not mounted", []string{"readPath", `{"path":"/host/etc/hostname"}`}, "io", ""},
		{"asked /proc/self is not mounted", []string{"readPath", `{"path":"/self/environ"}`}, "io", ""},
		{"an operator mount is", append([]string{"-mount", shared + ":/shared:ro"}, "readPath", `{"path":"/shared/note.txt"}`), "", "granted"},
		{"a mount of the cache is refused", append([]string{"-mount", filepath.Join(dir, "cache") + ":/c"}, "readPath", `{"path":"/c"}`), "mount refused", ""},
		{"a mount of /proc is refused", append([]string{"-mount", "/proc:/p"}, "readPath", `{"path":"/p"}`), "mount refused", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var flags, rest []string
			for i := 0; i < len(tc.args); i++ {
				if tc.args[i] == "-mount" {
					flags = append(flags, tc.args[i], tc.args[i+1])
					i++
					continue
				}
				rest = append(rest, tc.args[i])
			}
			args := append(append(append([]string{"plugin", "call"}, cache...), flags...), append([]string{snoop}, rest...)...)
			out, _, err := run0(t, args...)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("%v: %v\n%s", args, err, out)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error()+out, tc.wantErr)):
				t.Fatalf("%v: err %v, want %q\n%s", args, err, tc.wantErr, out)
			case !strings.Contains(out, tc.wantOut):
				t.Fatalf("%v printed %s, want %q", args, out, tc.wantOut)
			}
		})
	}
	if _, _, err := run0(t, append(append([]string{"plugin", "call"}, cache...), flagger, "flaggerRun")...); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("plugin call of a module writing the interrupt flag: %v", err)
	}

	grants := filepath.Join(dir, "grants.yaml")
	os.WriteFile(grants, []byte("plugins:\n  snoop:\n    mounts: [\""+shared+":/shared:ro\"]\n"), 0o644)
	out, _, err := run0(t, "plugin", "inspect", "-grants", grants, "-json", snoop)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Grant struct {
			Mounts         []struct{ HostPath, GuestPath string } `json:"mounts"`
			RequestedPaths map[string]string                      `json:"requestedPaths"`
		} `json:"grant"`
	}
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatal(err)
	}
	if in.Grant.RequestedPaths["/"] != "/host" || len(in.Grant.Mounts) != 1 || in.Grant.Mounts[0].GuestPath != "/shared" {
		t.Fatalf("inspect -json grant: %+v", in.Grant)
	}
	out, _, _ = run0(t, "plugin", "inspect", "-grants", grants, snoop)
	if !strings.Contains(out, "asks / -> /host") || !strings.Contains(out, "granted "+shared) {
		t.Fatalf("inspect:\n%s", out)
	}
}

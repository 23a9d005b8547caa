package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// The PDK and the SDK are modules that plugin authors and API clients
// `go get`. No VCS host is reachable from CI, so the test serves this
// checkout's pdk/ and sdk/ as a module proxy would: a GOPROXY directory in
// the layout of https://go.dev/ref/mod#goproxy-protocol ($module/@v/list,
// $version.info, .mod and .zip, the zip made by golang.org/x/mod/zip as
// `go mod download` checks it), at the pseudo-version the checkout's HEAD
// would have. Everything else is what an author outside the repository does.

// moduleProxy writes a GOPROXY directory serving the checkout's PDK and SDK
// modules at version, and returns its file:// URL.
func moduleProxy(t *testing.T, version string) string {
	t.Helper()
	proxy := t.TempDir()
	for _, m := range []struct{ path, dir string }{
		{pdkModule, "../../pdk"},
		{agenthostModule + "/sdk", "../../sdk"},
	} {
		v := filepath.Join(proxy, filepath.FromSlash(m.path), "@v")
		if err := os.MkdirAll(v, 0o755); err != nil {
			t.Fatal(err)
		}
		goMod, err := os.ReadFile(filepath.Join(m.dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := json.Marshal(struct {
			Version string
			Time    time.Time
		}{version, time.Now().UTC()})
		for name, body := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": goMod} {
			if err := os.WriteFile(filepath.Join(v, name), body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f, err := os.Create(filepath.Join(v, version+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		if err := modzip.CreateFromDir(f, module.Version{Path: m.path, Version: version}, m.dir); err != nil {
			t.Fatalf("zip of %s: %v", m.path, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return "file://" + filepath.ToSlash(proxy)
}

// headPseudoVersion is the pseudo-version the module proxy gives this
// checkout's HEAD (https://go.dev/ref/mod#pseudo-versions), the version
// the scaffold of a server built from it requires.
func headPseudoVersion(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "log", "-1", "--format=%ct %H").Output()
	if err != nil {
		t.Fatalf("git log: %v (the test serves the checkout's commit)", err)
	}
	var secs int64
	var hash string
	if _, err := fmt.Sscan(string(out), &secs, &hash); err != nil {
		t.Fatal(err)
	}
	return module.PseudoVersion("", "", time.Unix(secs, 0), hash[:12])
}

// TestOutsideTheRepositoryWithGoGet: a scaffolded plugin and an SDK program
// build in a folder outside the repository with nothing but `go get` of
// the PDK and SDK modules, each of which brings no other module; the plugin
// passes its fixtures and the program talks to a real server.
func TestOutsideTheRepositoryWithGoGet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin and a program")
	}
	version := headPseudoVersion(t)
	proxy := moduleProxy(t, version)
	outside := t.TempDir() // under $TMPDIR: no go.mod or go.work above it
	if root, mod := enclosingModule(outside); root != "" {
		t.Fatalf("%s lies in module %s at %s", outside, mod, root)
	}
	// The modules come from the proxy only (GOPROXY has no fallback, so a
	// requirement the PDK or SDK does not bring along fails the build), into
	// a module cache of the test's own; their checksums are not in the
	// public checksum database, as for any private module.
	for k, v := range map[string]string{
		"GOPROXY": proxy, "GONOSUMDB": agenthostModule, "GOFLAGS": "-modcacherw", "GOWORK": "off",
		"GOMODCACHE": filepath.Join(outside, "modcache"), "GOTOOLCHAIN": "local",
	} {
		t.Setenv(k, v)
	}
	goCmd := func(dir string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	onlyModules := func(dir string, want ...string) {
		t.Helper()
		got := strings.Fields(goCmd(dir, nil, "list", "-m", "-f", "{{.Path}}", "all"))
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%s's build list is %v, want %v", dir, got, want)
		}
	}

	// Every kind the scaffold makes; the tool's fixtures are its two.
	for _, kind := range []string{"tool", "extractor", "actions", "connector"} {
		t.Run("plugin "+kind, func(t *testing.T) {
			name := "hello-" + kind
			dir := filepath.Join(outside, name)
			out, stderr, err := run0(t, "plugin", "new", name, "-kind", kind, "-dir", dir, "-pdk", version)
			if err != nil {
				t.Fatalf("plugin new: %v\n%s", err, stderr)
			}
			if !strings.Contains(out, "go mod tidy") {
				t.Errorf("plugin new's next steps lack go mod tidy:\n%s", out)
			}
			goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "require " + pdkModule + " " + version + "\n"; !strings.Contains(string(goMod), want) || strings.Contains(string(goMod), "replace") {
				t.Fatalf("the scaffold's go.mod:\n%s\nwant %q and no replace", goMod, want)
			}
			if _, err := os.Stat(filepath.Join(dir, "main_test.go")); err == nil {
				t.Fatal("the scaffold outside a checkout has main_test.go, whose harness is the server's module")
			}
			goCmd(dir, nil, "get", pdkModule+"@"+version)
			onlyModules(dir, "example.com/"+name, pdkModule)
			goCmd(dir, []string{"GOOS=wasip1", "GOARCH=wasm"}, "build", "-buildmode=c-shared", "-o", filepath.Join(outside, name+".wasm"), ".")
			// The server's own build and fixture run of the same folder.
			out, stderr, err = run0(t, "plugin", "test", dir)
			if err != nil || !strings.Contains(out, " 0 failed") || strings.Contains(out, "FAIL") || kind == "tool" && !strings.Contains(out, "2 passed, 0 failed") {
				t.Fatalf("plugin test: %v\n%s%s", err, out, stderr)
			}
		})
	}

	t.Run("sdk", func(t *testing.T) {
		dir := filepath.Join(outside, "prog")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(sdkProgram), 0o644); err != nil {
			t.Fatal(err)
		}
		goCmd(dir, nil, "mod", "init", "example.com/prog")
		goCmd(dir, nil, "get", agenthostModule+"/sdk@"+version)
		onlyModules(dir, "example.com/prog", agenthostModule+"/sdk")
		bin := filepath.Join(outside, "prog.bin")
		goCmd(dir, nil, "build", "-o", bin, ".")

		data, plugins := t.TempDir(), t.TempDir()
		tc := bootstrapTenant(t, data, plugins, "acme", nil)
		base := hostileServer(t, data, &syncBuffer{}, plugins)
		cmd := exec.Command(bin, base)
		cmd.Env = append(os.Environ(), "AGENTHOST_TOKEN="+tc.token)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "workspace "+tc.workspace) {
			t.Fatalf("the SDK program: %v\n%s\nwant workspace %s", err, out, tc.workspace)
		}
	})
}

// sdkProgram is a client of the API as its user writes it: the SDK's
// README's first example.
const sdkProgram = `package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agenthost/agenthost/sdk"
)

func main() {
	c, err := sdk.New(os.Args[1], sdk.WithToken(os.Getenv("AGENTHOST_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	workspaces, err := c.ListWorkspaces(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range workspaces {
		fmt.Println("workspace", w.ID, w.Name)
	}
}
`

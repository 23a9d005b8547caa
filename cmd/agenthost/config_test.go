package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/settings"
)

// startup is one invocation of a command of the registry (its name in the
// settings' Commands: "storage" is admin storage, "admin" its other
// subcommands, "plugin" the plugin subcommands that read settings): words
// name the command, args let it run past parsing.
type startup struct {
	command string
	words   []string
	args    []string
}

// startups are invocations of every command that reads settings, with the
// data directory and the compile cache in dir (neither may be made by a
// refused start-up); each command of the registry has one at least.
func startups(dir string) []startup {
	data, cache := filepath.Join(dir, "data"), filepath.Join(dir, "cache")
	wasm := filepath.Join(dir, "none.wasm")
	return []startup{
		{"serve", []string{"serve"}, []string{"-data", data}},
		{"worker", []string{"worker"}, []string{"-data", data}},
		{"migrate", []string{"migrate"}, []string{"-data", data}},
		{"backup", []string{"backup"}, []string{"-data", data, "-to", filepath.Join(dir, "backup")}},
		{"restore", []string{"restore"}, []string{"-data", data, "-from", filepath.Join(dir, "backup")}},
		{"blobs", []string{"blobs", "copy"}, []string{"-data", data}},
		{"admin", []string{"admin", "user"}, []string{"-data", data, "-tenant", "t", "-email", "a@example.org"}},
		{"storage", []string{"admin", "storage"}, []string{"-data", data}},
		{"load", []string{"load"}, []string{"-database", "postgres://127.0.0.1:1/none", "-timeout", "1ms"}},
		{"run", []string{"run"}, []string{"hello", "-url", "http://127.0.0.1:1", "-token", "ahk_none"}},
		{"plugin", []string{"plugin", "call"}, []string{"-cache-dir", cache, wasm, "tool"}},
		{"plugin", []string{"plugin", "warm"}, []string{"-cache-dir", cache}},
		{"plugin", []string{"plugin", "test"}, []string{"-cache-dir", cache, dir}},
		{"plugin", []string{"plugin", "inspect"}, []string{wasm}},
		{"plugin", []string{"plugin", "install"}, []string{"-url", "http://127.0.0.1:1", wasm}},
		{"plugin", []string{"plugin", "upgrade"}, []string{"-url", "http://127.0.0.1:1", wasm}},
		{"plugin", []string{"plugin", "remove"}, []string{"-url", "http://127.0.0.1:1", "none"}},
		{"plugin", []string{"plugin", "audit"}, []string{"-url", "http://127.0.0.1:1"}},
		{"config", []string{"config"}, nil},
	}
}

// badValues is a value of each typed kind that does not read.
var badValues = map[settings.Kind]string{settings.Bool: "yes", settings.Int: "ten", settings.Duration: "10",
	settings.Size: "1 gigabyte", settings.Money: "0,10"}

// TestConfigBadValueRefusesStartup sets, one at a time, a value that does
// not parse of every typed variable each command reads (config reads them
// all), and requires start-up to be refused naming the variable before the
// data directory or the compile cache is made (the value fell back to its
// default before: AGENTHOST_COOKIE_SECURE=yes ran without Secure cookies,
// AGENTHOST_DATABASE_WAIT=10 made migrate wait 30 s).
func TestConfigBadValueRefusesStartup(t *testing.T) {
	perCommand := map[string]int{}
	for i, st := range startups("") {
		for _, s := range settings.All() {
			v, ok := badValues[s.Kind]
			if !ok || s.Env == "" || (st.command != "config" && !readBy(s, st.command)) {
				continue
			}
			perCommand[st.command]++
			t.Run(strings.Join(st.words, "-")+"/"+s.Env, func(t *testing.T) {
				t.Setenv(s.Env, v)
				dir := t.TempDir()
				st := startups(dir)[i]
				var out, errOut bytes.Buffer
				err := run(context.Background(), append(slices.Clone(st.words), st.args...), &out, &errOut)
				want := s.Env + "="
				if !s.Secret {
					want += strconv.Quote(v)
				}
				if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, settings.ErrValue) {
					t.Fatalf("%s=%q: got %v, want start-up refused naming %s", s.Env, v, err, want)
				}
				if st.command != "config" && !strings.Contains(err.Error(), st.command+": refusing to start") {
					t.Fatalf("got %v, want %q", err, st.command+": refusing to start")
				}
				for _, made := range []string{"data", "cache"} {
					if _, err := os.Stat(filepath.Join(dir, made)); !os.IsNotExist(err) {
						t.Fatalf("the %s directory was made (%v)", made, err)
					}
				}
			})
		}
	}
	// Every command that reads a typed variable was tried, each with all of them.
	for _, s := range settings.All() {
		if _, typed := badValues[s.Kind]; !typed || s.Env == "" {
			continue
		}
		for _, c := range strings.Fields(s.Commands) {
			if perCommand[c] == 0 {
				t.Errorf("%s reads %s, but no start-up of %s was tried (add it to startups)", c, s.Env, c)
			}
		}
	}
	if perCommand["serve"] < 20 || perCommand["migrate"] < 1 || perCommand["plugin"] < 2 || perCommand["storage"] < 5 {
		t.Fatalf("too few cases: %v", perCommand)
	}
}

func TestConfigMisspeltSectionRefusesStartup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agenthost.yaml")
	if err := os.WriteFile(path, []byte("llm: {}\nobjectstorage:\n  bucket: b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	err := run(context.Background(), []string{"serve", "-data", data, "-config", path}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "objectstorage (line 2): unknown key") {
		t.Fatalf("got %v, want the misspelt section refused with its line", err)
	}
}

// TestConfigCommand runs agenthost config with a value from each source and
// a secret, and reads its table.
func TestConfigCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agenthost.yaml")
	if err := os.WriteFile(path, []byte("objectStorage:\n  bucket: from-file\n  region: eu\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTHOST_CONFIG", path)
	t.Setenv("AGENTHOST_S3_REGION", "from-env")
	t.Setenv("AGENTHOST_SECRET_KEY", "c2VjcmV0LXZhbHVlLXRoYXQtbXVzdC1ub3Qtc2hvdw==")
	t.Setenv("AGENTHOST_METRICS_TOKEN", "tok-must-not-show")
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"config", "-addr", "127.0.0.1:9999"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) >= 5 {
			rows[f[1]] = f
		}
	}
	for env, want := range map[string][2]string{
		"AGENTHOST_ADDR":             {"127.0.0.1:9999", "flag"},
		"AGENTHOST_S3_BUCKET":        {"from-file", "file"},
		"AGENTHOST_S3_REGION":        {"from-env", "env"},
		"AGENTHOST_SECRET_KEY":       {"********", "env"},
		"AGENTHOST_METRICS_TOKEN":    {"********", "env"},
		"AGENTHOST_SHUTDOWN_TIMEOUT": {"10s", "default"},
	} {
		r := rows[env]
		if len(r) < 5 || r[3] != want[0] || r[4] != want[1] {
			t.Errorf("%s: row %q, want value %s from %s", env, r, want[0], want[1])
		}
	}
	if s := out.String(); strings.Contains(s, "must-not-show") || strings.Contains(s, "c2VjcmV0") {
		t.Fatalf("a secret was printed:\n%s", s)
	}

	t.Setenv("AGENTHOST_COOKIE_SECURE", "yes")
	err := run(context.Background(), []string{"config"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `AGENTHOST_COOKIE_SECURE="yes"`) {
		t.Fatalf("config with a bad value: got %v", err)
	}
}

// flagDefaults are the flags a command's -h lists, each with the default it
// shows ("" when it shows none: the zero value).
func flagDefaults(t *testing.T, words []string) map[string]flagHelp {
	t.Helper()
	var out, errOut bytes.Buffer
	_ = run(context.Background(), append(slices.Clone(words), "-h"), &out, &errOut) // -h is an error to some
	flags := map[string]flagHelp{}
	name := ""
	for _, line := range strings.Split(out.String()+errOut.String(), "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			name = m[1]
			flags[name] = flagHelp{}
			continue
		}
		text, ok := strings.CutPrefix(line, "    \t") // the flag package's indent of a usage line
		if name == "" || !ok {
			continue
		}
		h := flags[name]
		if i := strings.LastIndex(text, " (default "); i >= 0 && strings.HasSuffix(text, ")") {
			d := text[i+len(" (default ") : len(text)-1]
			if u, err := strconv.Unquote(d); err == nil {
				d = u
			}
			h.def, text = d, text[:i]
		}
		if h.usage != "" {
			h.usage += "\n"
		}
		h.usage += text
		flags[name] = h
	}
	if len(flags) == 0 {
		t.Fatalf("%v -h lists no flags:\n%s%s", words, out.String(), errOut.String())
	}
	return flags
}

// flagHelp is what `-h` shows of a flag: its usage text and its default.
type flagHelp struct{ usage, def string }

var flagLine = regexp.MustCompile(`^  -([a-z0-9-]+)`)

// sameDefault says whether a flag showing shown has the registry's default
// def: both read as the setting's kind give the same value (720h is
// 720h0m0s, 1GiB 1073741824), no default shown being the kind's zero. A
// default the registry describes in parentheses ("(embedded)") is the
// flag's zero value.
func sameDefault(s settings.Setting, def, shown string) bool {
	if strings.HasPrefix(def, "(") {
		def = ""
	}
	zero := map[settings.Kind]string{settings.Bool: "false", settings.Int: "0", settings.Duration: "0s", settings.Size: "0", settings.Money: "0"}[s.Kind]
	if def == "" {
		def = zero
	}
	if shown == "" {
		shown = zero
	}
	read := func(v string) (any, error) {
		switch s.Kind {
		case settings.Bool:
			return strconv.ParseBool(v)
		case settings.Int:
			return strconv.ParseInt(v, 10, 64)
		case settings.Duration:
			return time.ParseDuration(v)
		case settings.Size:
			return settings.ParseSize(v)
		case settings.Money:
			return money.Parse(v)
		}
		return v, nil
	}
	a, errA := read(def)
	b, errB := read(shown)
	return errA == nil && errB == nil && a == b
}

// TestConfigFlagDefaults fails when a command's flag has a default other
// than the registry's (so that agenthost config and docs/configuration.md
// never show a default the code does not use), when its -h text does not
// begin with the registry's doc line, when the registry says a
// command takes a flag none of its invocations has, and when a command has
// a flag of the registry the registry does not list it for (its variable
// would not reach it: checkSettings binds by the registry).
func TestConfigFlagDefaults(t *testing.T) {
	t.Setenv("AGENTHOST_SERVER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel.example:4318")
	// Defaults the registry describes rather than gives, and what the flag has.
	described := map[string]string{"cache-dir": defaultCacheDir(), "otlp-endpoint": "http://otel.example:4318"}
	// Flags of a command named like a setting that are something else.
	homonyms := map[string][]string{"admin": {"workspace", "url"}}
	// Settings a command reads from the variable alone, without the flag.
	envOnly := map[string][]string{"admin": {"mcp-command", "secret-key-file"}}
	registry := map[string]settings.Setting{}
	for _, s := range settings.All() {
		if s.Flag != "" {
			registry[s.Flag] = s
		}
	}
	has := map[string]map[string]bool{} // command → the registry's flags its invocations have
	for _, st := range startups(t.TempDir()) {
		if st.command == "config" {
			continue // its flags are every setting's, with no default
		}
		if has[st.command] == nil {
			has[st.command] = map[string]bool{}
		}
		for name, help := range flagDefaults(t, st.words) {
			shown := help.def
			s, ok := registry[name]
			if !ok || slices.Contains(homonyms[st.command], name) {
				continue
			}
			has[st.command][name] = true
			if !readBy(s, st.command) {
				t.Errorf("%v has -%s, but the registry does not list %s for it", st.words, name, st.command)
				continue
			}
			// The help is the registry's doc line (settingUsage), then
			// what is particular to the command.
			if !strings.HasPrefix(help.usage, s.Usage()) {
				t.Errorf("%v -%s: -h says %q, not the registry's %q first", st.words, name, help.usage, s.Usage())
			}
			if s.Kind == settings.List {
				continue // repeatable: no default
			}
			def := s.Default
			if d, ok := described[name]; ok {
				def = d
			}
			if !sameDefault(s, def, shown) {
				t.Errorf("%v -%s: the flag's default is %q, the registry's %q", st.words, name, shown, s.Default)
			}
		}
	}
	for _, s := range settings.All() {
		for _, c := range strings.Fields(s.Commands) {
			if s.Flag != "" && !has[c][s.Flag] && !slices.Contains(envOnly[c], s.Flag) {
				t.Errorf("the registry lists %s for -%s, which no invocation of %s has", c, s.Flag, c)
			}
		}
	}
}

// TestConfigEnvReachesFlags: a variable gives its flag its value unless the
// command line gave the flag; an empty typed variable is unset, an empty
// text one gives ""; a size takes its units.
func TestConfigEnvReachesFlags(t *testing.T) {
	for _, tc := range []struct {
		name, env, value string
		args             []string
		flag, want       string
	}{
		{"GiB", "AGENTHOST_MAX_UPLOAD", "1GiB", nil, "max-upload", "1073741824"},
		{"bytes", "AGENTHOST_MAX_UPLOAD", "1073741824", nil, "max-upload", "1073741824"},
		{"MB", "AGENTHOST_MAX_UPLOAD", "512MB", nil, "max-upload", "512000000"},
		{"flag wins", "AGENTHOST_MAX_UPLOAD", "512MB", []string{"-max-upload", "2KiB"}, "max-upload", "2048"},
		{"empty size is unset", "AGENTHOST_MAX_UPLOAD", "", nil, "max-upload", "7"},
		{"int", "AGENTHOST_TENANT_RATE", "12", nil, "tenant-rate", "12"},
		{"text", "AGENTHOST_ADDR", ":9090", nil, "addr", ":9090"},
		{"empty text", "AGENTHOST_ADDR", "", nil, "addr", ""},
		{"another command's", "AGENTHOST_WORKER_METRICS_ADDR", ":9", nil, "metrics-addr", "default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			sizeFlag(fs, "max-upload", 7, "")
			fs.Int64("tenant-rate", 7, "")
			fs.String("addr", "default", "")
			fs.String("metrics-addr", "default", "")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			lookup := func(k string) (string, bool) { return tc.value, k == tc.env }
			if err := bindEnv("serve", fs, lookup); err != nil {
				t.Fatal(err)
			}
			if got := fs.Lookup(tc.flag).Value.String(); got != tc.want {
				t.Errorf("%s=%q %v: -%s %s, want %s", tc.env, tc.value, tc.args, tc.flag, got, tc.want)
			}
		})
	}
}

// TestConfigCacheLimitsRefuseNegative: a negative compile-cache limit was
// taken for the default (AGENTHOST_CACHE_MAX_UNUSED) or passed on; it is
// refused, from the variable or the flag, before the cache is opened.
func TestConfigCacheLimitsRefuseNegative(t *testing.T) {
	for _, tc := range []struct {
		name, env, value string
		args             []string
		want             string
	}{
		{"unused variable", "AGENTHOST_CACHE_MAX_UNUSED", "-1h", nil, "-cache-max-unused (AGENTHOST_CACHE_MAX_UNUSED) -1h0m0s: negative"},
		{"size variable", "AGENTHOST_CACHE_MAX_MB", "-5", nil, "-cache-max-mb (AGENTHOST_CACHE_MAX_MB) -5: negative"},
		{"unused flag", "", "", []string{"-cache-max-unused", "-2h"}, "-cache-max-unused (AGENTHOST_CACHE_MAX_UNUSED) -2h0m0s: negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(tc.env, tc.value)
			}
			cache := filepath.Join(t.TempDir(), "cache")
			err := run(context.Background(), append([]string{"plugin", "warm", "-cache-dir", cache}, tc.args...), &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(cache); !os.IsNotExist(err) {
				t.Fatalf("the cache was made (%v)", err)
			}
		})
	}
}

// TestConfigServerFlagBeatsVariable: -server, -url's earlier name, counts as
// -url given, so AGENTHOST_URL does not replace it; AGENTHOST_SERVER, the
// earlier variable, is the default AGENTHOST_URL replaces.
func TestConfigServerFlagBeatsVariable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		url, old string
		want     string
	}{
		{"-server", []string{"-server", "http://flag.example"}, "http://env.example", "", "http://flag.example"},
		{"-url", []string{"-url", "http://flag.example"}, "http://env.example", "", "http://flag.example"},
		{"variable", nil, "http://env.example", "http://old.example", "http://env.example"},
		{"earlier variable", nil, "", "http://old.example", "http://old.example"},
		{"default", nil, "", "", "http://127.0.0.1:8080"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AGENTHOST_SERVER", tc.old)
			fs := flag.NewFlagSet("plugin audit", flag.ContinueOnError)
			rf := addRemoteFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			lookup := func(k string) (string, bool) { return tc.url, k == "AGENTHOST_URL" && tc.url != "" }
			if err := bindEnv("plugin", fs, lookup); err != nil {
				t.Fatal(err)
			}
			if *rf.server != tc.want {
				t.Errorf("%v, AGENTHOST_URL=%q, AGENTHOST_SERVER=%q: %s, want %s", tc.args, tc.url, tc.old, *rf.server, tc.want)
			}
		})
	}
}

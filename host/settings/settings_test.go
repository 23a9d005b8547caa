package settings

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// badValue is a value each kind refuses; String and List take any text.
var badValue = map[Kind]string{Bool: "yes", Int: "12x", Duration: "10", Size: "1 GB!", Money: "0,10"}

func TestBadValueRefusedNamingIt(t *testing.T) {
	n := 0
	for _, s := range All() {
		bad, ok := badValue[s.Kind]
		if !ok || s.Env == "" {
			continue
		}
		n++
		t.Run(s.Env, func(t *testing.T) {
			err := CheckEnv(func(k string) (string, bool) {
				if k == s.Env {
					return bad, true
				}
				return "", false
			})
			if !errors.Is(err, ErrValue) {
				t.Fatalf("%s=%q: got %v, want ErrValue", s.Env, bad, err)
			}
			want := s.Env + "="
			if !s.Secret {
				want += `"` + bad + `"`
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not name %s", err, want)
			}
			if s.Default != "" && !strings.HasPrefix(s.Default, "(") && strings.Contains(s.Default, " ") == false {
				if err := s.Check(s.Default); err != nil {
					t.Fatalf("the default does not read: %v", err)
				}
			}
		})
	}
	if n < 20 {
		t.Fatalf("only %d typed variables checked", n)
	}
}

func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		in   string
		ok   bool
	}{
		{Bool, "true", true}, {Bool, "1", true}, {Bool, "F", true}, {Bool, "yes", false}, {Bool, "on", false},
		{Int, "-3", true}, {Int, "3.0", false}, {Int, "1e3", false},
		{Duration, "1h30m", true}, {Duration, "30", false},
		{Size, "1073741824", true}, {Size, "1GiB", true}, {Size, "1GB", true}, {Size, "512 MB", true},
		{Size, "1gb", false}, {Size, "1.5GB", false}, {Size, "GB", false}, {Size, "99999999999TiB", false},
		{Money, "0.10", true}, {Money, "12", true}, {Money, "0,10", false}, {Money, "1e-3", false},
		{String, "anything at all", true}, {List, "a,b", true},
	} {
		err := tc.kind.check(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%s %q: err %v, want ok=%v", tc.kind, tc.in, err, tc.ok)
		}
	}
	for in, want := range map[string]int64{"1GiB": 1 << 30, "1GB": 1e9, "512 MB": 512e6, "7": 7, "3KiB": 3072, "2B": 2} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestParseFileRefusesUnknownSection(t *testing.T) {
	for _, tc := range []struct {
		name, doc, wantErr string
	}{
		{"known", "llm:\n  models: {}\nobjectStorage:\n  bucket: b\n", ""},
		{"empty", "", ""},
		{"misspelt", "llm: {}\nobjectstorage:\n  bucket: b\n", "objectstorage (line 2): unknown key"},
		{"json", `{"llm": {}, "webserch": {}}`, "webserch (line 1): unknown key"},
		{"not a mapping", "- llm\n", "must be a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tc.doc))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	root, err := ParseFile([]byte("objectStorage:\n  bucket: b\n  pathStyle: true\nllm:\n  retry: {attempts: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"objectStorage.bucket": "b", "objectStorage.pathStyle": "true", "llm.retry.attempts": "3"} {
		if got, ok := Lookup(root, path); !ok || got != want {
			t.Errorf("Lookup(%s) = %q, %v; want %q", path, got, ok, want)
		}
	}
	if _, ok := Lookup(root, "objectStorage.region"); ok {
		t.Error("an absent key was found")
	}
}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocGenerated fails when docs/configuration.md's table is not what the
// registry generates: run `go generate ./host/settings`.
func TestDocGenerated(t *testing.T) {
	page := readDoc(t)
	next, err := Splice(page)
	if err != nil {
		t.Fatal(err)
	}
	if next != page {
		t.Fatal("docs/configuration.md differs from the registry: run `go generate ./host/settings`")
	}
}

func TestEverySettingDocumentedOnce(t *testing.T) {
	page := readDoc(t)
	table := page[strings.Index(page, DocBegin):strings.Index(page, DocEnd)]
	seen := map[string]bool{}
	for _, s := range All() {
		for _, name := range []string{"`-" + s.Flag + "`", "`" + s.Env + "`", "`" + s.File + "`"} {
			if name == "`-`" || name == "``" {
				continue
			}
			if !strings.Contains(page, name) {
				t.Errorf("%s is not in docs/configuration.md", name)
			}
		}
		if s.Env != "" {
			if seen[s.Env] {
				t.Errorf("%s is in the registry twice", s.Env)
			}
			seen[s.Env] = true
			if c := strings.Count(table, "| `"+s.Env+"` |"); c != 1 {
				t.Errorf("%s has %d rows in the table", s.Env, c)
			}
		}
		if s.Doc == "" || s.Commands == "" {
			t.Errorf("%s has no doc line or no command", s.Name())
		}
	}
}

// notSettings are AGENTHOST_ names in the code that are not settings of
// their own: test switches, prefixes of a family the registry names by one
// member (AGENTHOST_<PROVIDER>_…, AGENTHOST_OAUTH_<NAME>_…, the
// _FUNCTION_CALLING of each chain) and an earlier name.
var notSettings = regexp.MustCompile(`^AGENTHOST_(TEST_|BENCH_|JOBS_TEST_|INDEXING_TEST_|MCP_CONFORMANCE_|LOAD_N$|CANARY$|OAUTH_[A-Z]+_|MODEL_$|MODEL_[A-Z]+_FUNCTION_CALLING$|OPENAI_$|OAUTH_$|LOCAL_|MISTRAL_|SERVER$)`)

// TestRegistryCoversCode fails when the code reads an AGENTHOST_ variable
// the registry does not list.
func TestRegistryCoversCode(t *testing.T) {
	lit := regexp.MustCompile(`"(AGENTHOST_[A-Z0-9_]+)"`)
	known := map[string]bool{}
	for _, s := range All() {
		known[s.Env] = true
	}
	for _, dir := range []string{"../../cmd/agenthost", ".."} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range lit.FindAllStringSubmatch(string(b), -1) {
				if !known[m[1]] && !notSettings.MatchString(m[1]) {
					t.Errorf("%s reads %s, which host/settings/registry.go does not list", path, m[1])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"listen address", "listen address"},
		{"directory of third-party plugins (`*.wasm`)", "directory of third-party plugins (*.wasm)"},
		{"the passkeys' RP ID ([people.md](people.md)); none", "the passkeys' RP ID (docs/people.md); none"},
		{"see [mcp-client.md](mcp-client.md#adding-a-server)", "see docs/mcp-client.md"},
		{"blobs in a bucket with [`objectStorage`](#object-storage-objectstorage)", "blobs in a bucket with objectStorage"},
		{"two [a](x) and [b](y#z)", "two a and b"},
	} {
		if got := (Setting{Doc: tc.doc}).Usage(); got != tc.want {
			t.Errorf("Usage of %q = %q, want %q", tc.doc, got, tc.want)
		}
	}
	for _, s := range All() {
		if u := s.Usage(); strings.ContainsAny(u, "`[]") && strings.Contains(u, "](") {
			t.Errorf("%s: the usage keeps Markdown: %q", s.Name(), u)
		}
	}
	if s, ok := ByFlag("tenant-rate"); !ok || s.Env != "AGENTHOST_TENANT_RATE" {
		t.Errorf("ByFlag(tenant-rate) = %+v, %v", s, ok)
	}
	if _, ok := ByFlag("no-such-flag"); ok {
		t.Error("ByFlag found a flag that is not registered")
	}
}

package manifest_test

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// base is a plugin's first version: one read-only tool, http to one host,
// tight limits.
func base() *manifest.Manifest {
	return &manifest.Manifest{Name: "notes", Version: "1.0.0", Kind: manifest.KindTool,
		Tools:        []manifest.Tool{{Name: "read", ReadOnly: true}, {Name: "write"}},
		Capabilities: []string{"http", "kv"},
		Limits: manifest.Limits{MemoryMiB: 64, TimeoutMs: 1000, MaxOutputBytes: 1 << 20, MaxHTTPResponseBytes: 1 << 20,
			AllowedHosts: []string{"api.example.com", "*.cdn.example.com", "static.example.com:443"},
			AllowedPaths: map[string]string{"/srv/data": "ro:/data"}},
	}
}

func connector() *manifest.Manifest {
	m := base()
	m.Kind = manifest.KindConnector
	m.Connector = &manifest.Connector{Provider: "jira", Services: []string{"issues"}, Hosts: []string{"*.atlassian.net"}, Auth: "basic", Scopes: []string{"read:jira-work"}}
	return m
}

// TestCompare: each kind of widening is found and said as the operator is
// shown it; narrowing and sameness are not widening.
func TestCompare(t *testing.T) {
	cases := []struct {
		name     string
		old      func() *manifest.Manifest
		change   func(m *manifest.Manifest)
		widening []string // Change.String of each widening, in order
		others   []string // the changes that do not widen
	}{
		{"the same", base, func(*manifest.Manifest) {}, nil, nil},
		{"only the version and description", base, func(m *manifest.Manifest) { m.Version, m.Description = "1.1.0", "new words" }, nil, nil},
		{"timeout raised", base, func(m *manifest.Manifest) { m.Limits.TimeoutMs = 600000 }, []string{"timeoutMs 1000 → 600000"}, nil},
		{"memory raised", base, func(m *manifest.Manifest) { m.Limits.MemoryMiB = 1024 }, []string{"memoryMiB 64 → 1024"}, nil},
		{"output raised", base, func(m *manifest.Manifest) { m.Limits.MaxOutputBytes = 100 << 20 }, []string{"maxOutputBytes 1048576 → 104857600"}, nil},
		{"http response raised", base, func(m *manifest.Manifest) { m.Limits.MaxHTTPResponseBytes = 2 << 20 }, []string{"maxHttpResponseBytes 1048576 → 2097152"}, nil},
		{"limits lowered", base, func(m *manifest.Manifest) { m.Limits.TimeoutMs, m.Limits.MemoryMiB = 500, 32 },
			nil, []string{"memoryMiB 64 → 32", "timeoutMs 1000 → 500"}},
		{"tool added", base, func(m *manifest.Manifest) { m.Tools = append(m.Tools, manifest.Tool{Name: "deleteAll"}) }, []string{"tool deleteAll added"}, nil},
		{"read-only tool added", base, func(m *manifest.Manifest) { m.Tools = append(m.Tools, manifest.Tool{Name: "list", ReadOnly: true}) },
			[]string{"tool list added"}, nil},
		{"read-only tool made writing", base, func(m *manifest.Manifest) { m.Tools[0].ReadOnly = false }, []string{"tool read: readOnly → writing"}, nil},
		{"writing tool made read-only", base, func(m *manifest.Manifest) { m.Tools[1].ReadOnly = true }, nil, []string{"tool write: writing → readOnly"}},
		{"tool removed", base, func(m *manifest.Manifest) { m.Tools = m.Tools[:1] }, nil, []string{"tool write removed"}},
		{"capability added", base, func(m *manifest.Manifest) { m.Capabilities = append(m.Capabilities, "files") }, []string{"capability files added"}, nil},
		{"capability removed", base, func(m *manifest.Manifest) { m.Capabilities = []string{"kv"} }, nil, []string{"capability http removed"}},
		{"host added", base, func(m *manifest.Manifest) { m.Limits.AllowedHosts = append(m.Limits.AllowedHosts, "evil.example.org") },
			[]string{"host evil.example.org added"}, nil},
		{"host widened to a pattern", base, func(m *manifest.Manifest) { m.Limits.AllowedHosts[0] = "*.example.com" },
			[]string{"host *.example.com added"}, []string{"host api.example.com removed"}},
		{"host's port dropped", base, func(m *manifest.Manifest) { m.Limits.AllowedHosts[2] = "static.example.com" },
			[]string{"host static.example.com added"}, []string{"host static.example.com:443 removed"}},
		{"a host the old pattern covers", base, func(m *manifest.Manifest) {
			m.Limits.AllowedHosts = append(m.Limits.AllowedHosts, "eu.cdn.example.com")
		},
			nil, []string{"host eu.cdn.example.com added"}},
		{"a port pinned", base, func(m *manifest.Manifest) { m.Limits.AllowedHosts[0] = "api.example.com:443" },
			nil, []string{"host api.example.com:443 added", "host api.example.com removed"}},
		{"host removed", base, func(m *manifest.Manifest) { m.Limits.AllowedHosts = m.Limits.AllowedHosts[:1] },
			nil, []string{"host *.cdn.example.com removed", "host static.example.com:443 removed"}},
		{"path asked for", base, func(m *manifest.Manifest) { m.Limits.AllowedPaths["/etc"] = "/etc" }, []string{"path /etc added"}, nil},
		{"path made writable", base, func(m *manifest.Manifest) { m.Limits.AllowedPaths["/srv/data"] = "/data" }, []string{"path /srv/data ro:/data → /data"}, nil},
		{"kind changed", base, func(m *manifest.Manifest) {
			m.Kind = manifest.KindConnector
			m.Connector = &manifest.Connector{Provider: "jira", Services: []string{"issues"}}
		}, []string{"kind tool → connector", "connector provider jira added", "connector service issues added"}, nil},
		{"connector host added", connector, func(m *manifest.Manifest) { m.Connector.Hosts = append(m.Connector.Hosts, "*.example.org") },
			[]string{"connector host *.example.org added"}, nil},
		{"connector provider changed", connector, func(m *manifest.Manifest) { m.Connector.Provider = "microsoft" },
			[]string{"connector provider jira → microsoft"}, nil},
		{"connector auth dropped: any", connector, func(m *manifest.Manifest) { m.Connector.Auth = "" }, []string{"connector auth basic → any"}, nil},
		{"connector service and scope added", connector, func(m *manifest.Manifest) {
			m.Connector.Services = append(m.Connector.Services, "boards")
			m.Connector.Scopes = append(m.Connector.Scopes, "write:jira-work")
		}, []string{"connector service boards added", "connector scope write:jira-work added"}, nil},
		{"connector narrowed", connector, func(m *manifest.Manifest) { m.Connector.Scopes, m.Connector.Hosts = nil, nil },
			nil, []string{"connector host *.atlassian.net removed", "connector scope read:jira-work removed"}},
		{"everything of the incident at once", base, func(m *manifest.Manifest) {
			m.Limits.TimeoutMs, m.Limits.MemoryMiB, m.Limits.MaxOutputBytes = 600000, 1024, 256<<20
			m.Tools[0].ReadOnly = false
			m.Tools = append(m.Tools, manifest.Tool{Name: "deleteAll"})
		}, []string{"memoryMiB 64 → 1024", "timeoutMs 1000 → 600000", "maxOutputBytes 1048576 → 268435456", "tool deleteAll added", "tool read: readOnly → writing"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, next := tc.old(), tc.old()
			tc.change(next)
			changes := manifest.Compare(old, next)
			var widening, others []string
			for _, c := range changes {
				if c.Widens {
					widening = append(widening, c.String())
				} else {
					others = append(others, c.String())
				}
			}
			if strings.Join(widening, "; ") != strings.Join(tc.widening, "; ") {
				t.Errorf("widening\n%q\nwant\n%q", widening, tc.widening)
			}
			if strings.Join(others, "; ") != strings.Join(tc.others, "; ") {
				t.Errorf("other changes\n%q\nwant\n%q", others, tc.others)
			}
			if got := len(manifest.Widenings(changes)); got != len(tc.widening) {
				t.Errorf("Widenings: %d, want %d", got, len(tc.widening))
			}
			// Pure: the manifests are as they were.
			if again := manifest.Compare(old, next); len(again) != len(changes) {
				t.Errorf("a second Compare differs: %v", again)
			}
			if back := manifest.Widenings(manifest.Compare(next, old)); len(tc.others) == 0 && len(tc.widening) > 0 && len(back) != 0 &&
				tc.name != "kind changed" && tc.name != "connector provider changed" { // another kind or provider either way
				t.Errorf("going back widens: %v", back)
			}
		})
	}
}

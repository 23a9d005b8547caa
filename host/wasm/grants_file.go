package wasm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenthost/agenthost/host/egress"
)

// GrantsFile is the operator's plugin configuration (YAML or JSON), read by
// `serve -grants FILE`, `worker` and `plugin inspect|call -grants FILE`:
//
//	ceilings:                # the most any manifest may ask for
//	  memoryMiB: 1024
//	  timeoutMs: 600000
//	  maxOutputBytes: 134217728
//	  maxHttpResponseBytes: 67108864
//	plugins:
//	  jira-connector:
//	    capabilities: [http, progress]
//	    mounts: ["/srv/exports:/exports:ro"]
//	    ceilings: {timeoutMs: 1200000}
//	  simd-tool:
//	    sha256: 9f86d081884c7d65...   # the module this grant was given for
//	    uninterruptible: true         # loads although it cannot be instrumented
//
// A manifest asks; this file grants. Nothing in it is inferred from a plugin.
type GrantsFile struct {
	Ceilings CeilingsFile         `yaml:"ceilings" json:"ceilings"`
	Plugins  map[string]GrantFile `yaml:"plugins" json:"plugins"`
}

// GrantFile is one plugin's entry of a GrantsFile.
type GrantFile struct {
	Capabilities []string     `yaml:"capabilities" json:"capabilities,omitempty"`
	Mounts       []string     `yaml:"mounts" json:"mounts,omitempty"` // HOST:GUEST or HOST:GUEST:ro
	Ceilings     CeilingsFile `yaml:"ceilings" json:"ceilings,omitzero"`
	// SHA256 pins the grant to one module (see Grant.SHA256).
	SHA256 string `yaml:"sha256" json:"sha256,omitempty"`
	// Uninterruptible lets a plugin the host cannot instrument load (see
	// Grant.Uninterruptible).
	Uninterruptible bool `yaml:"uninterruptible" json:"uninterruptible,omitempty"`
	// Hosts are added to the manifest's allowedHosts (see Grant.Hosts).
	Hosts []string `yaml:"hosts" json:"hosts,omitempty"`
}

// CeilingsFile are Ceilings as written in a GrantsFile.
type CeilingsFile struct {
	MemoryMiB            int   `yaml:"memoryMiB" json:"memoryMiB,omitempty"`
	TimeoutMs            int64 `yaml:"timeoutMs" json:"timeoutMs,omitempty"`
	MaxOutputBytes       int64 `yaml:"maxOutputBytes" json:"maxOutputBytes,omitempty"`
	MaxHTTPResponseBytes int64 `yaml:"maxHttpResponseBytes" json:"maxHttpResponseBytes,omitempty"`
}

func (c CeilingsFile) ceilings() (Ceilings, error) {
	if c.MemoryMiB < 0 || c.TimeoutMs < 0 || c.MaxOutputBytes < 0 || c.MaxHTTPResponseBytes < 0 {
		return Ceilings{}, errors.New("ceilings must not be negative")
	}
	return Ceilings{MemoryMiB: c.MemoryMiB, Timeout: time.Duration(c.TimeoutMs) * time.Millisecond,
		MaxOutputBytes: c.MaxOutputBytes, MaxHTTPResponseBytes: c.MaxHTTPResponseBytes}, nil
}

// LoadGrantsFile reads and checks a grants file; unknown keys are refused, so
// a misspelt grant never silently grants nothing.
func LoadGrantsFile(path string) (*GrantsFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("grants file: %w", err)
	}
	var g GrantsFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&g); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("grants file %s: %w", path, err)
	}
	if _, err := g.Apply(NewConfig()); err != nil {
		return nil, fmt.Errorf("grants file %s: %w", path, err)
	}
	return &g, nil
}

// Apply returns c with the file's ceilings and grants. Mount paths are
// checked when a plugin loads (they must exist then, and must not expose the
// host's own directories).
func (g *GrantsFile) Apply(c Config) (Config, error) {
	if g == nil {
		return c, nil
	}
	ceil, err := g.Ceilings.ceilings()
	if err != nil {
		return c, err
	}
	c = c.WithCeilings(ceil)
	for name, p := range g.Plugins {
		grant := Grant{Capabilities: p.Capabilities, SHA256: p.SHA256, Uninterruptible: p.Uninterruptible}
		for i, h := range p.Hosts {
			if _, err := egress.ParseHostEntry(h); err != nil {
				return c, fmt.Errorf("plugins.%s.hosts[%d]: %w", name, i, err)
			}
			grant.Hosts = append(grant.Hosts, h)
		}
		for _, s := range p.Mounts {
			m, err := ParseMount(s)
			if err != nil {
				return c, fmt.Errorf("plugins.%s.mounts: %w", name, err)
			}
			grant.Mounts = append(grant.Mounts, m)
		}
		if grant.Ceilings, err = p.Ceilings.ceilings(); err != nil {
			return c, fmt.Errorf("plugins.%s: %w", name, err)
		}
		c = c.WithPluginGrant(name, grant)
	}
	return c, nil
}

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/host/wasm/signature"
	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// inspection is what `plugin inspect` reports; -json prints it as is.
type inspection struct {
	File      string             `json:"file"`
	Size      int                `json:"size"`
	SHA256    string             `json:"sha256"`
	Manifest  *manifest.Manifest `json:"manifest"`
	Imports   []string           `json:"imports"`
	Signature struct {
		KeyID  string `json:"keyId,omitempty"`
		Status string `json:"status"` // unsigned, unchecked, valid, invalid, untrusted
		Detail string `json:"detail,omitempty"`
	} `json:"signature"`
	// Grant is what a server with these grants would give the plugin (as a
	// third-party plugin), and why it would refuse it.
	Grant wasm.Assessment `json:"grant"`
}

// pluginInspectCmd prints what a plugin is and wants, without running it.
func pluginInspectCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	var pubs stringList
	fs.Var(&pubs, "trust", settingUsage("trust", "here the keys the signature is checked against"))
	grants := addGrantFlags(fs, true)
	file, err := parseWithFile(fs, args)
	if err != nil {
		return err
	}
	if _, err := checkSettings("plugin", fs); err != nil {
		return err
	}
	module, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var in inspection
	in.File, in.Size = file, len(module)
	sum := sha256.Sum256(module)
	in.SHA256 = hex.EncodeToString(sum[:])
	if in.Manifest, err = manifest.Read(module); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	imports, err := wasmbin.Imports(module)
	if err != nil {
		return err
	}
	for _, im := range imports {
		in.Imports = append(in.Imports, im.Module+"."+im.Name)
	}
	id, signed, err := signature.Info(module)
	in.Signature.KeyID = string(id)
	switch {
	case err != nil:
		in.Signature.Status, in.Signature.Detail = "invalid", err.Error()
	case !signed:
		in.Signature.Status = "unsigned"
	case len(pubs) == 0:
		in.Signature.Status = "unchecked"
	default:
		trust, err := loadTrust(pubs)
		if err != nil {
			return err
		}
		_, verr := trust.Verify(module)
		switch {
		case verr == nil:
			in.Signature.Status = "valid"
		case errors.Is(verr, signature.ErrUntrustedKey):
			in.Signature.Status, in.Signature.Detail = "untrusted", verr.Error()
		default:
			in.Signature.Status, in.Signature.Detail = "invalid", verr.Error()
		}
	}
	cfg, err := grants.apply(wasm.NewConfig(), "")
	if err != nil {
		return err
	}
	in.Grant = cfg.Assess(in.Manifest, false)
	if err := cfg.CheckModule(in.Manifest.Name, module); err != nil {
		in.Grant.Problems = append(in.Grant.Problems, err.Error())
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	m := in.Manifest
	fmt.Fprintf(stdout, "%s %s (%s)\n  %s\n", m.Name, m.Version, m.Kind, m.Description)
	fmt.Fprintf(stdout, "file       %s, %.1f MB, sha256 %s\n", file, float64(in.Size)/1e6, in.SHA256)
	fmt.Fprintf(stdout, "signature  %s %s %s\n", in.Signature.Status, in.Signature.KeyID, in.Signature.Detail)
	g := in.Grant
	fmt.Fprintf(stdout, "capabilities %s (granted: %s; not granted: %s)\n", orNone(m.Capabilities), orNone(g.Granted), orNone(g.NotGranted))
	l := m.Limits
	fmt.Fprintf(stdout, "limits     asks memory %d MiB, timeout %d ms, output %d B, http response %d B (0 = host default)\n", l.MemoryMiB, l.TimeoutMs, l.MaxOutputBytes, l.MaxHTTPResponseBytes)
	fmt.Fprintf(stdout, "           runs with memory %d MiB, timeout %d ms, output %d B, http response %d B (ceilings %d MiB, %d ms, %d B, %d B)\n",
		g.Limits.MemoryMiB, g.Limits.TimeoutMs, g.Limits.MaxOutputBytes, g.Limits.MaxHTTPResponseBytes,
		g.Ceilings.MemoryMiB, g.Ceilings.TimeoutMs, g.Ceilings.MaxOutputBytes, g.Ceilings.MaxHTTPResponseBytes)
	fmt.Fprintf(stdout, "hosts      %s\n", orNone(l.AllowedHosts))
	var asked, mounts []string
	for host, guest := range l.AllowedPaths {
		asked = append(asked, host+" -> "+guest)
	}
	sort.Strings(asked)
	for _, mt := range g.Mounts {
		mounts = append(mounts, mt.String())
	}
	fmt.Fprintf(stdout, "paths      asks %s (requests only: mounted only as granted)\n", orNone(asked))
	fmt.Fprintf(stdout, "mounts     granted %s\n", orNone(mounts))
	if len(g.Problems) > 0 {
		fmt.Fprintf(stdout, "refused    %s\n", strings.Join(g.Problems, "; "))
	}
	fmt.Fprintf(stdout, "tools\n")
	for _, t := range m.Tools {
		ro := "writes"
		if t.ReadOnly {
			ro = "read-only"
		}
		fmt.Fprintf(stdout, "  %-24s %-9s %s\n", t.Name, ro, t.Description)
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		_ = json.Unmarshal(t.InputSchema, &s)
		var props []string
		for name := range s.Properties {
			props = append(props, name)
		}
		fmt.Fprintf(stdout, "  %-24s args: %s; required: %s\n", "", orNone(props), orNone(s.Required))
	}
	// An actions plugin's tools are its dynamicMode actions; the others are
	// declared but never offered to a model.
	for i, a := range m.Actions {
		if i == 0 {
			fmt.Fprintf(stdout, "actions\n")
		}
		mode := "static (not a tool)"
		if a.DynamicMode {
			mode = "dynamic (a tool)"
		}
		fmt.Fprintf(stdout, "  %-24s %-19s %s\n", a.ToolName(), mode, a.Description)
	}
	fmt.Fprintf(stdout, "imports    %s\n", orNone(in.Imports))
	return nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, ", ")
}

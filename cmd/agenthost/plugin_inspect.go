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
	"strings"

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
}

// pluginInspectCmd prints what a plugin is and wants, without running it.
func pluginInspectCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	var pubs stringList
	fs.Var(&pubs, "trust", "public key file to check the signature against (repeatable)")
	file, err := parseWithFile(fs, args)
	if err != nil {
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
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(in)
	}
	m := in.Manifest
	fmt.Fprintf(stdout, "%s %s (%s)\n  %s\n", m.Name, m.Version, m.Kind, m.Description)
	fmt.Fprintf(stdout, "file       %s, %.1f MB, sha256 %s\n", file, float64(in.Size)/1e6, in.SHA256)
	fmt.Fprintf(stdout, "signature  %s %s %s\n", in.Signature.Status, in.Signature.KeyID, in.Signature.Detail)
	fmt.Fprintf(stdout, "capabilities %s\n", orNone(m.Capabilities))
	l := m.Limits
	fmt.Fprintf(stdout, "limits     memory %d MiB, timeout %d ms, output %d B, http response %d B (0 = host default)\n", l.MemoryMiB, l.TimeoutMs, l.MaxOutputBytes, l.MaxHTTPResponseBytes)
	fmt.Fprintf(stdout, "hosts      %s\n", orNone(l.AllowedHosts))
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
	fmt.Fprintf(stdout, "imports    %s\n", orNone(in.Imports))
	return nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, ", ")
}

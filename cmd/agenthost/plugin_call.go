package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// pluginCallCmd runs one tool of a plugin file and prints the Result as JSON.
// It is the plugin author's tool: the plugin gets the capabilities it declares
// and needs no signature, but runs under all the host's other limits.
func pluginCallCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var allow hostList
	resolve := addResolveFlag(fs)
	fs.Var(&allow, "allow-host", settingUsage("allow-host"))
	progress := fs.Bool("progress", false, "print progress reports to stderr")
	inputFile := fs.String("input", "", "document the call reads through the input capability (extractors)")
	pageBatch := fs.Int("pages", 0, "with `N` above 0, an extractor's extract runs as its pre-scan, then readPages N pages a call, each result printed as it comes: a long document is never held whole (needs the plugin's prescan and readPages tools)")
	grants := addGrantFlags(fs, false)
	cache := addCacheFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := checkSettings("plugin", fs); err != nil {
		return err
	}
	if fs.NArg() < 2 || fs.NArg() > 3 {
		return fmt.Errorf("usage: agenthost plugin call [flags] FILE TOOL [JSON]")
	}
	file, tool := fs.Arg(0), fs.Arg(1)
	argsJSON := "{}"
	if fs.NArg() == 3 {
		argsJSON = fs.Arg(2)
	}
	if argsJSON == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		argsJSON = string(b)
	}
	module, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	limits, err := cache.limits()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	resolver, err := resolve.resolver()
	if err != nil {
		return err
	}
	reg, err := wasm.NewRegistry(builtin.NewCapabilities().List(wasm.EgressOptions{AllowPrivateHosts: allow, Resolver: resolver})...)
	if err != nil {
		return err
	}
	// The author's tool: the plugin gets the capabilities it declares, but
	// mounts and limits above the ceilings only as granted here.
	cfg := wasm.NewConfig().
		WithLogger(logger).
		WithCapabilities(reg).
		WithGrantDeclared(true).
		WithAllowUnsigned(true).
		WithPoolSize(1).
		WithCompilationCacheDir(*cache.dir).
		WithCompilationCacheLimits(limits)
	if m, err := manifest.Read(module); err == nil {
		if cfg, err = grants.apply(cfg, m.Name); err != nil {
			return err
		}
	}
	h, err := wasm.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.Close(context.WithoutCancel(ctx))
	p, err := h.Load(ctx, wasm.Source{Origin: file, Module: module})
	if err != nil {
		return err
	}
	var opts wasm.CallOptions
	if *inputFile != "" {
		f, err := os.Open(*inputFile)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		opts.Input = fileInput{f, st.Size()}
	}
	if p.Manifest().HasCapability("output") {
		// Emitted files (an archive's members) are listed on stderr.
		opts.Output = listingSink{stderr}
	}
	if *progress {
		opts.OnProgress = func(pr wasm.Progress) {
			fmt.Fprintf(stderr, "progress %3.0f%% %s\n", pr.Fraction*100, pr.Message)
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if *pageBatch > 0 {
		return callInPages(ctx, p, tool, json.RawMessage(argsJSON), &opts, *pageBatch, enc)
	}
	res := p.Call(ctx, tool, json.RawMessage(argsJSON), &opts)
	if err := enc.Encode(res); err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("tool %s failed: %s", tool, res.Error.Code)
	}
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// hostList is a repeatable host[:port] flag, each entry checked so that a
// typo is an error rather than an allowance that matches nothing.
type hostList []string

func (s *hostList) String() string { return strings.Join(*s, ",") }
func (s *hostList) Set(v string) error {
	if _, err := egress.ParseHostEntry(v); err != nil {
		return err
	}
	*s = append(*s, v)
	return nil
}

// fileInput serves a local file to the input capability.
type fileInput struct {
	*os.File
	size int64
}

func (f fileInput) Size() int64 { return f.size }

// callInPages runs an extractor's extract as the host's ingestion runs a
// long PDF: the pre-scan (structure, sections, page count), then readPages
// batch pages a call, each result encoded as soon as it returns. Only one
// batch's pages are in the guest and the host at a time, where one extract
// call of a 2,415-page manual held every page (1.2 GiB).
func callInPages(ctx context.Context, p *wasm.Plugin, tool string, args json.RawMessage, opts *wasm.CallOptions, batch int, enc *json.Encoder) error {
	if tool != "extract" || !p.HasTool("prescan") || !p.HasTool("readPages") {
		return fmt.Errorf("-pages: plugin %s has no prescan and readPages tools to run %s in pages (only an extractor's extract runs so)", p.Name(), tool)
	}
	res := p.Call(ctx, "prescan", args, opts)
	if err := enc.Encode(res); err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("tool prescan failed: %s", res.Error.Code)
	}
	var scan struct {
		Index struct {
			Structure struct {
				Pages    int `json:"pages"`
				Sections []struct {
					Title              string
					Level              int
					StartPage, EndPage int
				} `json:"sections"`
			} `json:"structure"`
		} `json:"index"`
	}
	if err := json.Unmarshal(res.Data, &scan); err != nil {
		return fmt.Errorf("prescan's result: %w", err)
	}
	type section struct {
		Title     string `json:"title,omitempty"`
		Level     int    `json:"level,omitempty"`
		StartPage int    `json:"startPage"`
		EndPage   int    `json:"endPage"`
	}
	// The pre-scan's sections go with every batch, so that no batch scans
	// the document again to place its pages.
	sections := make([]section, 0, len(scan.Index.Structure.Sections))
	for _, s := range scan.Index.Structure.Sections {
		sections = append(sections, section{s.Title, s.Level, s.StartPage, s.EndPage})
	}
	for from := 1; from <= scan.Index.Structure.Pages; from += batch {
		to := min(from+batch-1, scan.Index.Structure.Pages)
		raw, err := json.Marshal(map[string]any{"from": from, "to": to, "sections": sections})
		if err != nil {
			return err
		}
		res := p.Call(ctx, "readPages", raw, opts)
		if err := enc.Encode(res); err != nil {
			return err
		}
		if !res.OK {
			return fmt.Errorf("tool readPages (pages %d-%d) failed: %s", from, to, res.Error.Code)
		}
	}
	return nil
}

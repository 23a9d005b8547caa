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
	fs.Var(&allow, "allow-host", "`host[:port]` the plugin may reach even if it resolves to a private or loopback address; without a port, ports 80 and 443 only (repeatable)")
	progress := fs.Bool("progress", false, "print progress reports to stderr")
	inputFile := fs.String("input", "", "document the call reads through the input capability (extractors)")
	grants := addGrantFlags(fs, false)
	cache := addCacheFlags(fs)
	if err := fs.Parse(args); err != nil {
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
		WithCompilationCacheLimits(cache.limits())
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
	res := p.Call(ctx, tool, json.RawMessage(argsJSON), &opts)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
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

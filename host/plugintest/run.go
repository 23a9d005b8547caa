package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/build"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// Options say what Run runs.
type Options struct {
	// Dir is the plugin's folder: built unless Module is set, and its
	// testdata/ holds the fixtures.
	Dir string
	// Module is a built plugin to run instead of building Dir.
	Module []byte
	// Out receives the report (manifest, schemas, each fixture's result).
	Out io.Writer
	// CacheDir is the compile cache ("" compiles in memory).
	CacheDir string
	// CacheLimits bound it (zero: wasm.DefaultCacheLimits).
	CacheLimits wasm.CacheLimits
	// Logger receives the plugin's log lines (nil: discarded).
	Logger *slog.Logger
}

// Outcome is one fixture's result.
type Outcome struct {
	Fixture string
	Pass    bool
	// Why says what differed (empty when it passed).
	Why string
	// Result is what the call answered.
	Result wasm.Result
}

// Report is a run's outcome, fixture by fixture.
type Report struct {
	Manifest *manifest.Manifest
	Outcomes []Outcome
}

// Failed counts the fixtures that failed.
func (r Report) Failed() int {
	n := 0
	for _, o := range r.Outcomes {
		if !o.Pass {
			n++
		}
	}
	return n
}

// Build compiles the plugin folder dir with the host's capabilities known,
// as `agenthost plugin build` does.
func Build(ctx context.Context, dir string) ([]byte, *manifest.Manifest, error) {
	reg, err := wasm.NewRegistry(capabilities()...)
	if err != nil {
		return nil, nil, err
	}
	return build.Build(ctx, dir, build.Options{Registry: reg})
}

// Run builds (or takes) the plugin, loads it as a third-party plugin would
// be (its code checked against its manifest; capabilities it declares
// granted, since the author runs it), and runs every fixture. An error
// means the run could not happen (no fixtures, a build that failed, a
// plugin refused); failed fixtures are in the report.
func Run(ctx context.Context, o Options) (Report, error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	fixtures, err := Load(o.Dir)
	if err != nil {
		return Report{}, err
	}
	if len(fixtures) == 0 {
		return Report{}, fmt.Errorf("plugin test: %s has no fixtures (testdata/*.json)", filepath.Join(o.Dir, "testdata"))
	}
	module := o.Module
	if module == nil {
		if module, _, err = Build(ctx, o.Dir); err != nil {
			return Report{}, err
		}
	}
	reg, err := wasm.NewRegistry(capabilities()...)
	if err != nil {
		return Report{}, err
	}
	h, err := wasm.New(ctx, wasm.NewConfig().WithLogger(o.Logger).WithCapabilities(reg).
		WithGrantDeclared(true).WithAllowUnsigned(true).WithPoolSize(1).WithCompilationCacheDir(o.CacheDir).WithCompilationCacheLimits(o.CacheLimits))
	if err != nil {
		return Report{}, err
	}
	defer h.Close(context.WithoutCancel(ctx))
	p, err := h.Load(ctx, wasm.Source{Origin: "plugin test:" + o.Dir, Module: module})
	if err != nil {
		return Report{}, err
	}
	if err := p.Warm(ctx); err != nil {
		return Report{}, err
	}
	m := p.Manifest()
	rep := Report{Manifest: m}
	printManifest(o.Out, p)
	for _, f := range fixtures {
		out := runOne(ctx, o.Dir, p, f)
		rep.Outcomes = append(rep.Outcomes, out)
		printOutcome(o.Out, f, out)
	}
	fmt.Fprintf(o.Out, "%d passed, %d failed\n", len(rep.Outcomes)-rep.Failed(), rep.Failed())
	return rep, nil
}

func runOne(ctx context.Context, dir string, p *wasm.Plugin, f Fixture) Outcome {
	w, err := newWorld(ctx, f, p.Manifest())
	if err != nil {
		return Outcome{Fixture: f.Name, Why: err.Error()}
	}
	ctx = withUser(context.WithValue(ctx, worldKey{}, w))
	opts := &wasm.CallOptions{Tenant: "plugin-test"}
	tool, args := f.Tool, f.Args
	if f.Input != "" {
		doc, err := os.Open(filepath.Join(dir, "testdata", f.Input))
		if err != nil {
			return Outcome{Fixture: f.Name, Why: err.Error()}
		}
		defer doc.Close()
		st, err := doc.Stat()
		if err != nil {
			return Outcome{Fixture: f.Name, Why: err.Error()}
		}
		opts.Input = input{doc, st.Size()}
		if tool == "" {
			tool = "extract"
		}
		if len(args) == 0 {
			args, _ = json.Marshal(map[string]string{"name": filepath.Base(f.Input), "mimeType": f.MIMEType})
		}
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	res := p.Call(ctx, tool, args, opts)
	out := Outcome{Fixture: f.Name, Result: res}
	out.Why = check(f, res, w)
	out.Pass = out.Why == ""
	return out
}

// check returns what differs from the fixture's expectations ("" if
// nothing): the answer, and whatever the simulation saw go wrong (a
// request without the headers its recording wants, a credential that
// reached the plugin).
func check(f Fixture, res wasm.Result, w *world) string {
	w.mu.Lock()
	whys := append([]string{}, w.problems...)
	var written []string
	for _, name := range w.written {
		written = append(written, string(w.files[name]))
	}
	w.mu.Unlock()
	if w.conn != nil {
		texts := append(written, res.Text, string(res.Data))
		if res.Error != nil {
			texts = append(texts, res.Error.Message)
		}
		if why := w.conn.leaked(texts...); why != "" {
			whys = append(whys, why)
		}
	}
	if why := checkAnswer(f, res, w); why != "" {
		whys = append(whys, why)
	}
	return strings.Join(whys, "; ")
}

// checkAnswer returns what differs from the fixture's expectations of the
// answer ("" if nothing).
func checkAnswer(f Fixture, res wasm.Result, w *world) string {
	if f.WantError != "" {
		switch {
		case res.OK:
			return fmt.Sprintf("want error %q, the call succeeded", f.WantError)
		case res.Error.Code == f.WantError || strings.Contains(res.Error.Message, f.WantError):
			return ""
		}
		return fmt.Sprintf("want error %q, got %s: %s", f.WantError, res.Error.Code, res.Error.Message)
	}
	if !res.OK {
		return fmt.Sprintf("the call failed: %s: %s", res.Error.Code, res.Error.Message)
	}
	var whys []string
	answer := res.Text
	if res.Data != nil {
		answer = string(res.Data)
	}
	if f.Want != nil {
		if f.Want.Text != nil && res.Text != *f.Want.Text {
			whys = append(whys, fmt.Sprintf("want text %q, got %q", *f.Want.Text, answer))
		}
		if f.Want.Data != nil && !sameJSON(f.Want.Data, res.Data) {
			whys = append(whys, fmt.Sprintf("want data %s, got %s", compact(f.Want.Data), compact(res.Data)))
		}
		for _, s := range f.Want.Contains {
			if !strings.Contains(answer, s) {
				whys = append(whys, fmt.Sprintf("the answer lacks %q", s))
			}
		}
	}
	if len(f.WantText) > 0 {
		text, err := extractedText(res.Data)
		if err != nil {
			whys = append(whys, err.Error())
		}
		for _, s := range f.WantText {
			if !strings.Contains(text, s) {
				whys = append(whys, fmt.Sprintf("the extracted text lacks %q", s))
			}
		}
	}
	for name, frag := range f.WantFiles {
		w.mu.Lock()
		b, ok := w.files[name]
		w.mu.Unlock()
		switch {
		case !ok:
			whys = append(whys, fmt.Sprintf("no file %q was written", name))
		case !strings.Contains(string(b), frag):
			whys = append(whys, fmt.Sprintf("file %q lacks %q", name, frag))
		}
	}
	return strings.Join(whys, "; ")
}

// extractedText joins the text objects of an extractor's answer.
func extractedText(data json.RawMessage) (string, error) {
	var r struct {
		Objects []struct {
			ContentType string `json:"contentType"`
			Data        string `json:"data"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return "", fmt.Errorf("the answer is not an extraction ({\"index\", \"objects\"}): %v", err)
	}
	var b strings.Builder
	for _, o := range r.Objects {
		if o.ContentType == "text" {
			b.WriteString(o.Data)
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func compact(b json.RawMessage) string {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return string(b)
	}
	return out.String()
}

func printManifest(w io.Writer, p *wasm.Plugin) {
	m := p.Manifest()
	fmt.Fprintf(w, "plugin %s %s (%s), sha256 %.12s\n  %s\n", m.Name, m.Version, m.Kind, p.SHA256(), m.Description)
	caps := "none"
	if len(m.Capabilities) > 0 {
		caps = strings.Join(m.Capabilities, ", ")
	}
	fmt.Fprintf(w, "  capabilities: %s\n", caps)
	if len(m.Limits.AllowedHosts) > 0 {
		fmt.Fprintf(w, "  allowed hosts: %s\n", strings.Join(m.Limits.AllowedHosts, ", "))
	}
	if c := m.Connector; c != nil {
		auth := c.Auth
		if auth == "" {
			auth = "any"
		}
		fmt.Fprintf(w, "  connector: provider %s, services %s, hosts %s, auth %s\n", c.Provider, strings.Join(c.Services, ", "), strings.Join(c.Hosts, ", "), auth)
	}
	if m.Extractor != nil {
		fmt.Fprintf(w, "  extracts: %s %s\n", strings.Join(m.Extractor.MIMETypes, ", "), strings.Join(m.Extractor.Extensions, " "))
	}
	for _, t := range m.Tools {
		ro := "writes"
		if t.ReadOnly {
			ro = "read-only"
		}
		fmt.Fprintf(w, "  tool %s (%s): %s\n    input:  %s\n", t.Name, ro, t.Description, compact(t.InputSchema))
		if len(t.OutputSchema) > 0 {
			fmt.Fprintf(w, "    output: %s\n", compact(t.OutputSchema))
		}
	}
}

func printOutcome(w io.Writer, f Fixture, o Outcome) {
	verdict := "PASS"
	if !o.Pass {
		verdict = "FAIL"
	}
	var got string
	switch {
	case o.Result.Error != nil:
		got = "error " + o.Result.Error.Code + ": " + o.Result.Error.Message
	case o.Result.Data != nil:
		got = compact(o.Result.Data)
	default:
		got = fmt.Sprintf("%q", o.Result.Text)
	}
	if len(got) > 300 {
		got = got[:300] + "…"
	}
	call := f.Tool
	if f.Input != "" {
		call = "extract " + f.Input
	}
	fmt.Fprintf(w, "%s %s: %s %s\n  → %s\n", verdict, f.Name, call, compact(f.Args), got)
	if o.Why != "" {
		fmt.Fprintf(w, "  %s\n", o.Why)
	}
}

// input serves a fixture's document to the input capability.
type input struct {
	*os.File
	size int64
}

func (i input) Size() int64 { return i.size }

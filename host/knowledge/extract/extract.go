package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// Tool is the tool every extractor plugin offers: arguments
// {"name","mimeType"}, the document through the input capability, and as
// structured result {"index": content.Index, "objects": [content.Object]}.
const Tool = "extract"

// ErrNoExtractor: no extractor was chosen for this type (no loaded plugin
// extracts it, or several third-party plugins claim it and the operator
// named none).
var ErrNoExtractor = errors.New("no extractor for this type")

// Plugins is what extraction needs of the plugin runtime.
type Runtime interface {
	Plugins() []*wasm.Plugin
}

// Chooser tells which extractor plugin a document gets and why; the
// ingester records it on the document's content when its Extractor (or
// ContainerResolver) is one.
type Chooser interface {
	Choose(name, mimeType string) Choice
}

// Set chooses the extractor plugin of a document among the loaded
// plugins (Choose: built-ins win unless the operator chose otherwise) and
// runs it sandboxed.
type Set struct {
	plugins Runtime
	choice  OperatorChoice
	logger  *slog.Logger
	meter   ComputeMeter
}

// ComputeMeter bills an extractor run (billing.Meter): every plugin run is
// a transaction, attributed by the run's context. HoldCompute holds a run of
// at most limit against the payer's spending limits before it starts (an
// error refuses it) and returns what records it once it ended.
type ComputeMeter interface {
	HoldCompute(ctx context.Context, tool string, limit time.Duration) (settle func(ctx context.Context, plugin string, d time.Duration) error, err error)
}

// WithMeter bills every extractor run through m.
func (e *Set) WithMeter(m ComputeMeter) *Set {
	e.meter = m
	return e
}

// call runs an extractor's tool and bills the run.
func (e *Set) call(ctx context.Context, p *wasm.Plugin, tool string, args []byte, opts *wasm.CallOptions) wasm.Result {
	if e.meter == nil {
		return p.Call(ctx, tool, args, opts)
	}
	settle, err := e.meter.HoldCompute(ctx, tool, time.Duration(p.Limits().TimeoutMs)*time.Millisecond)
	if err != nil {
		return wasm.Result{Error: &wasm.Error{Code: wasm.CodeSpendingLimit, Message: err.Error()}}
	}
	r := p.Call(ctx, tool, args, opts)
	if err := settle(ctx, p.Name(), r.Stats.Duration); err != nil {
		e.logger.Error("knowledge: extractor run not billed", "plugin", p.Name(), "tool", tool, "err", err)
	}
	return r
}

// New returns extractors over the loaded plugins, with no
// operator choice.
func New(p Runtime) *Set {
	return &Set{plugins: p, logger: slog.New(slog.DiscardHandler)}
}

// WithChoice applies the operator's choice of extractors by MIME type;
// Check refuses one that does not fit the loaded plugins.
func (e *Set) WithChoice(c OperatorChoice) *Set {
	e.choice = normalizeChoice(c)
	return e
}

// WithLogger logs Check's table of who extracts what and, at debug level,
// each document's choice; nil discards.
func (e *Set) WithLogger(l *slog.Logger) *Set {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	e.logger = l
	return e
}

// normalizeChoice copies c with its MIME types in lower case, so a
// caller's map is not shared and a key matches as ParseOperatorChoice's.
func normalizeChoice(c OperatorChoice) OperatorChoice {
	out := make(OperatorChoice, len(c))
	for k, v := range c {
		out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	return out
}

// candidates lists the loaded extractor plugins, and them by name.
func (e *Set) candidates() ([]Candidate, map[string]*wasm.Plugin) {
	var cands []Candidate
	byName := map[string]*wasm.Plugin{}
	for _, p := range e.plugins.Plugins() {
		if c, ok := candidateOf(p); ok {
			cands = append(cands, c)
			byName[c.Name] = p
		}
	}
	return cands, byName
}

// Choose implements Chooser.
func (e *Set) Choose(name, mimeType string) Choice {
	cands, _ := e.candidates()
	return Choose(cands, e.choice, name, mimeType)
}

// For returns the extractor plugin of a document, as Choose decides.
func (e *Set) For(name, mimeType string) (*wasm.Plugin, bool) {
	cands, byName := e.candidates()
	c := Choose(cands, e.choice, name, mimeType)
	if !c.OK() {
		return nil, false
	}
	return byName[c.Extractor.Name], true
}

// pick chooses the plugin that runs tool on a document, logging the choice
// at debug level; nil with the reason when there is none.
func (e *Set) pick(name, mimeType, tool string) (*wasm.Plugin, Choice, error) {
	cands, byName := e.candidates()
	c := Choose(cands, e.choice, name, mimeType)
	if !c.OK() {
		e.logger.Debug("no extractor chosen", "name", name, "mimeType", mimeType, "tool", tool, "competitors", c.Competitors, "reason", c.Reason)
		return nil, c, fmt.Errorf("%w: %s (%s): %s", ErrNoExtractor, mimeType, name, c.Reason)
	}
	e.logger.Debug("extractor chosen", "name", name, "mimeType", mimeType, "tool", tool, "plugin", c.Extractor.Name,
		"version", c.Extractor.Version, "by", c.By, "match", c.Match, "competitors", c.Competitors)
	return byName[c.Extractor.Name], c, nil
}

// Check refuses an operator choice that does not fit the loaded plugins (a
// malformed type, a plugin that is not loaded, not an extractor, or that
// does not declare the type), naming each, and logs once which plugin
// extracts each declared MIME type, family and extension: the operator's
// choices, the built-ins' and third-party plugins' types, claims that were
// overruled and types left to no plugin because several claim them. Call
// it once the plugins are loaded.
func (e *Set) Check() error {
	cands, _ := e.candidates()
	loaded := map[string]*wasm.Plugin{}
	for _, p := range e.plugins.Plugins() {
		loaded[p.Name()] = p
	}
	var names []string
	for _, c := range cands {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	keys := make([]string, 0, len(e.choice))
	for k := range e.choice {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	for _, k := range keys {
		name := e.choice[k]
		item := k + "=" + name
		if !mimeKey.MatchString(k) {
			errs = append(errs, fmt.Errorf("extractor choice %s: %q is not a MIME type (type/subtype or type/*)", item, k))
			continue
		}
		p, ok := loaded[name]
		if !ok {
			errs = append(errs, fmt.Errorf("extractor choice %s: no plugin %q is loaded (extractors: %s)", item, name, strings.Join(names, ", ")))
			continue
		}
		c, ok := candidateOf(p)
		if !ok {
			errs = append(errs, fmt.Errorf("extractor choice %s: plugin %q is not an extractor (its manifest has no extractor section or no %q tool)", item, name, Tool))
			continue
		}
		if !c.declares(k) {
			errs = append(errs, fmt.Errorf("extractor choice %s: plugin %q does not declare %s in its manifest's extractor.mimeTypes", item, name, k))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	e.logTable(cands)
	return nil
}

// logTable logs, once per plugin, what it extracts and what it claimed in
// vain, and once per type that no plugin gets because several claim it.
func (e *Set) logTable(cands []Candidate) {
	for _, k := range sortedKeys(e.choice) {
		e.logger.Info("extractor chosen by the operator", "mimeType", k, "plugin", e.choice[k])
	}
	// Every declared type, family and extension, decided as a document of
	// that type (or extension) would be.
	type outcome struct{ serves, overruled []string }
	per := map[string]*outcome{}
	for _, c := range cands {
		per[c.Name] = &outcome{}
	}
	seen := map[string]bool{}
	for _, c := range cands {
		for _, key := range append(slices.Clone(c.MIMETypes), c.Extensions...) {
			if seen[key] {
				continue
			}
			seen[key] = true
			var ch Choice
			if strings.HasPrefix(key, ".") {
				ch = Choose(cands, e.choice, "document"+key, "")
			} else {
				ch = Choose(cands, e.choice, "", key)
			}
			if !ch.OK() {
				e.logger.Warn("no extractor for a type several third-party plugins claim; the operator names one with -extractor MIME=PLUGIN",
					"type", key, "plugins", ch.Competitors, "reason", ch.Reason)
				continue
			}
			per[ch.Extractor.Name].serves = append(per[ch.Extractor.Name].serves, key)
			for _, o := range ch.Competitors {
				per[o].overruled = append(per[o].overruled, key+" (to "+ch.Extractor.Name+", "+string(ch.By)+")")
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Name < cands[j].Name })
	for _, c := range cands {
		o := per[c.Name]
		if len(o.serves) > 0 {
			e.logger.Info("extractor serves these types", "plugin", c.Name, "version", c.Version, "sha256", c.SHA256[:min(len(c.SHA256), shaPrefix)],
				"builtin", c.Builtin, "serves", o.serves)
		}
		if len(o.overruled) == 0 {
			continue
		}
		level := slog.LevelWarn
		if c.Builtin {
			level = slog.LevelInfo
		}
		e.logger.Log(context.Background(), level, "extractor's claims overruled: another plugin serves these types (built-ins win unless the operator chooses otherwise)",
			"plugin", c.Name, "version", c.Version, "sha256", c.SHA256[:min(len(c.SHA256), shaPrefix)], "builtin", c.Builtin, "types", o.overruled)
	}
}

func sortedKeys(c OperatorChoice) []string {
	out := make([]string, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// extractResult is an extractor's structured result.
type extractResult struct {
	Index   content.Index    `json:"index"`
	Objects []content.Object `json:"objects"`
}

// Extract runs the document's extractor on in.
func (e *Set) Extract(ctx context.Context, name, mimeType string, in wasm.Input) (content.Index, []content.Object, error) {
	p, _, err := e.pick(name, mimeType, Tool)
	if err != nil {
		return content.Index{}, nil, err
	}
	args, _ := json.Marshal(unlock.WithPasswordArg(ctx, p, Tool, map[string]string{"name": name, "mimeType": mimeType}))
	r := e.call(ctx, p, Tool, args, &wasm.CallOptions{Input: in})
	if !r.OK {
		return content.Index{}, nil, fmt.Errorf("extractor %s: %w", p.Name(), r.Error)
	}
	var out extractResult
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return content.Index{}, nil, fmt.Errorf("extractor %s: result is not an index with objects: %w", p.Name(), err)
	}
	out.Index.TotalObjects = len(out.Objects)
	if len(out.Index.Objects) == 0 {
		for _, o := range out.Objects {
			out.Index.Objects = append(out.Index.Objects, content.Summarize(o))
		}
	}
	return out.Index, out.Objects, nil
}

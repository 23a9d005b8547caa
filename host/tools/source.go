package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// Source is a provider of tools beside the plugin runtime: an external MCP
// server added to a workspace's tool set (host/mcpclient). Its tools carry
// the names the set shows (already prefixed by the source) and their
// Plugin field names the source; Call validates the arguments against the
// tool's schema, as the plugin runtime does, and contains the source's
// failures in the Result.
type Source interface {
	// Name names the source in errors ("mcp:memory").
	Name() string
	// Tools lists the source's tools; an error means none are offered now.
	Tools(ctx context.Context) ([]Tool, error)
	// Call runs one of the source's tools by the name Tools gave it.
	Call(ctx context.Context, tool string, args []byte) wasm.Result
}

// SourceFinder finds the sources a workspace's tool set adds to the
// plugins' tools, in the principal's scope.
type SourceFinder interface {
	Sources(ctx context.Context, p tenancy.Principal, workspaceID string) ([]Source, error)
}

// ErrNameTaken says a source's tool was left out of a set because another
// tool of the set already has its name: names never collide silently.
var ErrNameTaken = errors.New("tool name already taken in the set")

// WithSources makes WorkspaceSet add the tools of the sources f finds to
// every workspace's set.
func (r *Registry) WithSources(f SourceFinder) *Registry {
	r.sources = f
	return r
}

// WorkspaceSet resolves a workspace's tool set as Set does and adds the
// tools of the workspace's sources. A source that cannot list its tools,
// or a tool whose name is taken, costs only those tools: the set is still
// usable, and each such problem is in Set.Problems.
func (r *Registry) WorkspaceSet(ctx context.Context, p tenancy.Principal, workspaceID, name string, extra ...string) (_ *Set, missing []string, _ error) {
	s, missing, err := r.Set(name, extra...)
	if err != nil || r.sources == nil {
		return s, missing, err
	}
	srcs, err := r.sources.Sources(ctx, p, workspaceID)
	if err != nil {
		return nil, nil, fmt.Errorf("tool sources of workspace %q: %w", workspaceID, err)
	}
	// Sources list their tools at once (each may have to connect first);
	// their tools join in the finder's order.
	lists := make([][]Tool, len(srcs))
	errs := make([]error, len(srcs))
	var wg sync.WaitGroup
	for i, src := range srcs {
		wg.Go(func() { lists[i], errs[i] = src.Tools(ctx) })
	}
	wg.Wait()
	for i, src := range srcs {
		err := errs[i]
		if err == nil {
			err = s.addTools(src, lists[i])
		} else {
			err = fmt.Errorf("%s: %w", src.Name(), err)
		}
		if err != nil {
			s.problems = append(s.problems, err)
		}
	}
	return s, missing, nil
}

// AddSource adds a source's tools to the set. A tool whose name the set
// already has is left out and reported (ErrNameTaken), as is a source that
// cannot list its tools; the other tools are added.
func (s *Set) AddSource(ctx context.Context, src Source) error {
	list, err := src.Tools(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", src.Name(), err)
	}
	return s.addTools(src, list)
}

func (s *Set) addTools(src Source, list []Tool) error {
	reserved := s.reservedNames()
	var taken []string
	for _, t := range list {
		if reserved[t.Name] || reserved[manifest.WireName(t.Name)] {
			taken = append(taken, t.Name)
			continue
		}
		if s.sources == nil {
			s.sources = map[string]Source{}
		}
		s.byName[t.Name] = t
		s.sources[t.Name] = src
		s.order = append(s.order, t.Name)
		reserved[t.Name], reserved[manifest.WireName(t.Name)] = true, true
	}
	if len(taken) > 0 {
		return fmt.Errorf("%s: %w: %s", src.Name(), ErrNameTaken, strings.Join(taken, ", "))
	}
	return nil
}

// reservedNames are the names a source's tool may not have: those of the
// set's tools, and of every loaded plugin tool even when the set leaves it
// out (a source's tool must not pass for a built-in one), each also as the
// model's APIs see it (manifest.WireName: "context.neutralizeData" is
// "context_neutralizeData" there, and two tools alike on the wire would
// fail the model call).
func (s *Set) reservedNames() map[string]bool {
	out := map[string]bool{}
	add := func(name string) {
		name, _, _ = strings.Cut(name, "@")
		out[name], out[manifest.WireName(name)] = true, true
	}
	for _, n := range s.order {
		add(n)
	}
	if s.runner != nil {
		for _, t := range s.runner.Tools() {
			add(t.Name)
		}
	}
	return out
}

// SourceOf names the source a tool of the set comes from ("mcp:memory");
// false for the plugins' tools.
func (s *Set) SourceOf(name string) (string, bool) {
	src, ok := s.sources[name]
	if !ok {
		return "", false
	}
	return src.Name(), true
}

// Problems lists why tools of the set's sources are missing (a source that
// could not list its tools, names already taken), for logs and listings.
func (s *Set) Problems() []error { return s.problems }

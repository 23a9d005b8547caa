package agentcontext

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/memory"
	"github.com/agenthost/agenthost/host/tenancy"
)

// ErrUnavailable: the knowledge store could not be searched (it failed or
// did not answer within the context builder's deadline). The agent then
// works without retrieved context (degraded, never failed: docs/agent.md).
var ErrUnavailable = errors.New("the knowledge store is unavailable")

// Retriever is what the context builder needs of search (search.Service).
type Retriever interface {
	Search(ctx context.Context, p tenancy.Principal, q kindex.Query) ([]kindex.Hit, error)
}

// MemoryReader is what the context builder needs of a workflow's memory.
type MemoryReader interface {
	Memories(ctx context.Context, p tenancy.Principal, workflowID string, source kindex.MemorySource, limit int) ([]kindex.Memory, error)
}

// ContextConfig tunes the context builder; zero values take the defaults in
// brackets.
type ContextConfig struct {
	// InstanceLimit bounds chunks of the workspace's documents [15].
	InstanceLimit int
	// SharedLimit bounds chunks of the tenant's shared documents [10].
	SharedLimit int
	// ToolResults is how many recent tool results are offered [5].
	ToolResults int
	// Entities bounds the workflow's facts offered [50].
	Entities int
	// MinScore drops hits scoring below it; 0 keeps all. A cosine
	// similarity floor (0.65 or 0.7) would suit pure vector search, but
	// hybrid search fuses ranks (its scores are reciprocal-rank sums) and
	// lexical scores are BM25, neither a similarity: a floor is only
	// meaningful for a searcher whose scores are, so none is set by
	// default.
	MinScore float64
	// SearchTimeout is how long the searches of one round may take before
	// the round goes on without them (degraded) [3s].
	SearchTimeout time.Duration
}

func (c ContextConfig) withDefaults() ContextConfig {
	if c.InstanceLimit <= 0 {
		c.InstanceLimit = 15
	}
	if c.SharedLimit <= 0 {
		c.SharedLimit = 10
	}
	if c.ToolResults <= 0 {
		c.ToolResults = 5
	}
	if c.Entities <= 0 {
		c.Entities = 50
	}
	if c.SearchTimeout <= 0 {
		c.SearchTimeout = 3 * time.Second
	}
	return c
}

// ContextBuilder is the agent's context manager: before an agent round
// it gathers, by priority, (1) the prompt, (2) chunks of the workspace's
// documents found for it, (3) the workflow's entities, (4) chunks of the
// tenant's shared documents, (5) the conversation's running summary and (6)
// the most recent tool results, and fits them into a token budget with the
// model's tokenizer, cutting or leaving out the lowest priorities first.
//
// The running summary stays on the workflow row, where the agent loop keeps
// it: it is one value per workflow, replaced whole by the loop and written
// with the round's statistics in one statement; moving it into the memory
// table would add a second write per round and nothing a reader needs. The
// builder takes it from the caller and places it by its priority.
type ContextBuilder struct {
	search Retriever
	memory MemoryReader
	cfg    ContextConfig
	logger *slog.Logger
}

// NewContextBuilder returns a builder; memory nil leaves out the workflow
// layer (entities and tool results).
func NewContextBuilder(search Retriever, mem MemoryReader, cfg ContextConfig, logger *slog.Logger) *ContextBuilder {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &ContextBuilder{search: search, memory: mem, cfg: cfg.withDefaults(), logger: logger}
}

// Retrieval is what the searches of one prompt found. A run's rounds share
// one prompt, so they can share one Retrieval.
type Retrieval struct {
	Instance, Shared []kindex.Hit
	// Err wraps ErrUnavailable when a search failed or timed out; the hits
	// are then empty.
	Err error
}

// Retrieve searches the workspace's documents (instance layer) and the
// tenant's shared ones (shared layer) for prompt, at once and within the
// configured deadline, as p: only chunks of files p may read are found.
func (b *ContextBuilder) Retrieve(ctx context.Context, p tenancy.Principal, workspaceID, prompt string) Retrieval {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.SearchTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var inst, shared []kindex.Hit
	var ierr, serr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		inst, ierr = b.search.Search(ctx, p, kindex.Query{Text: prompt, Layer: kindex.LayerInstance, WorkspaceID: workspaceID, Limit: b.cfg.InstanceLimit})
	}()
	go func() {
		defer wg.Done()
		shared, serr = b.search.Search(ctx, p, kindex.Query{Text: prompt, Layer: kindex.LayerShared, Limit: b.cfg.SharedLimit})
	}()
	wg.Wait()
	for _, err := range []error{ierr, serr} {
		// A prompt with no searchable words finds nothing; that is not an
		// outage.
		if err != nil && !errors.Is(err, tenancy.ErrInvalid) {
			if ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w (%w)", err, ctx.Err())
			}
			return Retrieval{Err: fmt.Errorf("%w: %w", ErrUnavailable, err)}
		}
	}
	// A shared file of this workspace is found by both searches: keep its
	// chunks once, as the workspace's.
	seen := map[string]bool{}
	out := Retrieval{}
	for _, h := range inst {
		if h.Score >= b.cfg.MinScore {
			seen[h.FileID+"/"+h.ID] = true
			out.Instance = append(out.Instance, h)
		}
	}
	for _, h := range shared {
		if h.Score >= b.cfg.MinScore && !seen[h.FileID+"/"+h.ID] {
			out.Shared = append(out.Shared, h)
		}
	}
	return out
}

// ContextRequest is one round's context.
type ContextRequest struct {
	Principal   tenancy.Principal
	WorkspaceID string
	WorkflowID  string
	// Prompt is the user's request: the search query, and priority 1. It is
	// the conversation's last user message, so it is not repeated in the
	// context; Budget is what is left beside it.
	Prompt string
	// Summary is the workflow's running summary (priority 5).
	Summary string
	// Model names the tokenizer.
	Model string
	// Budget is the tokens the context may take.
	Budget int
	// Retrieval is the prompt's search results; nil searches now.
	Retrieval *Retrieval
	// SkipTools names tool-result keys to leave out: results the
	// conversation still holds verbatim.
	SkipTools map[string]bool
}

// AgentContext is a built context.
type AgentContext struct {
	Assembly
	// Degraded wraps ErrUnavailable when the knowledge store could not be
	// reached: the context then lacks what it would have held.
	Degraded error
}

// Build gathers and assembles one round's context. It does not fail: what
// cannot be read is left out and said in Degraded.
func (b *ContextBuilder) Build(ctx context.Context, req ContextRequest) AgentContext {
	var r Retrieval
	if req.Retrieval != nil {
		r = *req.Retrieval
	} else {
		r = b.Retrieve(ctx, req.Principal, req.WorkspaceID, req.Prompt)
	}
	out := AgentContext{Degraded: r.Err}
	var parts []Part
	for _, h := range r.Instance {
		parts = append(parts, ChunkPart(PriorityInstance, h))
	}
	for _, h := range r.Shared {
		parts = append(parts, ChunkPart(PriorityShared, h))
	}
	if b.memory != nil && req.WorkflowID != "" {
		mctx, cancel := context.WithTimeout(ctx, b.cfg.SearchTimeout)
		entities, eerr := b.memory.Memories(mctx, req.Principal, req.WorkflowID, kindex.MemoryExtraction, b.cfg.Entities)
		// Tool results this run still holds verbatim are skipped, so read
		// enough to find ToolResults others.
		tools, terr := b.memory.Memories(mctx, req.Principal, req.WorkflowID, kindex.MemoryTool, min(1000, b.cfg.ToolResults+len(req.SkipTools)))
		cancel()
		if err := cmp.Or(eerr, terr); err != nil {
			b.logger.Warn("knowledge: reading the workflow's memory failed", "workflow", req.WorkflowID, "err", err)
			if out.Degraded == nil {
				out.Degraded = fmt.Errorf("%w: workflow memory: %w", ErrUnavailable, err)
			}
		}
		if eerr == nil {
			for _, m := range entities {
				parts = append(parts, Part{Priority: PriorityEntities, Text: strings.TrimPrefix(m.Key, memory.EntityPrefix) + ": " + m.Value})
			}
		}
		if terr == nil {
			n := 0
			for _, m := range tools {
				if req.SkipTools[m.Key] || n == b.cfg.ToolResults {
					continue
				}
				n++
				parts = append(parts, Part{Priority: PriorityToolResults, Text: m.Value})
			}
		}
	}
	if s := strings.TrimSpace(req.Summary); s != "" {
		parts = append(parts, Part{Priority: PrioritySummary, Text: s})
	}
	out.Assembly = Assemble(req.Model, req.Budget, parts)
	return out
}

package rounds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/agenthost/agenthost/host/agent"
	"github.com/agenthost/agenthost/host/knowledge/agentcontext"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/memory"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// Knowledge gives the agent its context from the knowledge store
// (docs/agent.md#design-decisions): before every model round the builder gathers the workspace's
// and the tenant's shared chunks for the prompt, the workflow's entities,
// the running summary and recent tool results into the room the
// conversation leaves; every tool result of a round is kept in the
// workflow's memory; and, opted in, the entity cache extracts facts after
// each round with tool results.
type Knowledge struct {
	Builder *agentcontext.ContextBuilder
	// Memory keeps tool results and entities (the workflow layer); nil
	// keeps nothing.
	Memory memory.Store
	// EntityCache turns on entity extraction: one extra
	// call of the summary model after each round with tool results, billed
	// as purpose "entities" and counted in the workflow's budget. It is the
	// host's default: a workspace may turn it on or off for itself
	// (Service.SetSettings). Off by default: every extraction costs a model
	// call.
	EntityCache bool
	// Model makes the entity extraction call (the llm client); needed when
	// EntityCache is set.
	Model agent.Model
}

// WithKnowledge gives the service's rounds their context from the
// knowledge store; without it they get none. It returns s.
func (s *Service) WithKnowledge(k Knowledge) *Service {
	if k.Builder == nil {
		return s
	}
	if k.EntityCache && (k.Model == nil || k.Memory == nil) {
		// Workspaces that turn it on get it off too (Settings says why).
		s.logger.Warn("rounds: the entity cache needs a model and a memory store; it stays off")
		k.EntityCache = false
	}
	s.know = &k
	return s
}

// roundKnowledge is one run's agent.ContextSource: it searches once per run
// (the prompt does not change between its rounds), reads the workflow's
// memory every round, and watches the run's events for tool results.
type roundKnowledge struct {
	s      *Service
	k      Knowledge
	p      tenancy.Principal
	w      workflows.Workflow
	prompt string

	mu        sync.Mutex
	retrieval *agentcontext.Retrieval
	thisRun   map[string]bool // memory keys of this run's tool results
	pending   []string        // tool results the entity cache has not seen
	warned    bool
}

func (s *Service) roundKnowledge(ctx context.Context, p tenancy.Principal, w workflows.Workflow, prompt string) *roundKnowledge {
	if s.know == nil {
		return nil
	}
	k := *s.know
	k.EntityCache = s.entityCache(ctx, p, w.WorkspaceID)
	return &roundKnowledge{s: s, k: k, p: p, w: w, prompt: prompt, thisRun: map[string]bool{}}
}

// observe keeps a tool result in the workflow's memory (source "tool", cut
// to memory.ToolResultBytes): later rounds and later requests of the
// workflow find it in their context.
func (rk *roundKnowledge) observe(ctx context.Context, e agent.Event) {
	tr, ok := e.Data.(workflows.ToolResultData)
	if !ok || rk.k.Memory == nil {
		return
	}
	out := tr.Content
	if !tr.OK {
		out = strings.TrimSpace(tr.ErrorCode + " " + tr.Error)
	}
	m := memory.ToolResult(rk.w.ID, tr.CallID, tr.Tool, tr.OK, out)
	if _, err := rk.k.Memory.UpsertMemory(ctx, rk.p, m); err != nil {
		rk.s.logger.Warn("rounds: keeping a tool result in the workflow's memory", "workflow", rk.w.ID, "err", err)
		return
	}
	rk.mu.Lock()
	rk.thisRun[m.Key] = true
	if tr.OK {
		rk.pending = append(rk.pending, m.Value)
	}
	rk.mu.Unlock()
}

// RoundContext implements agent.ContextSource.
func (rk *roundKnowledge) RoundContext(ctx context.Context, req agent.ContextRequest) (agent.RoundContext, error) {
	var usage modeluse.Usage
	rk.mu.Lock()
	pending := rk.pending
	rk.pending = nil
	rk.mu.Unlock()
	if rk.k.EntityCache && len(pending) > 0 {
		usage = rk.extractEntities(ctx, pending)
	}
	rk.mu.Lock()
	if rk.retrieval == nil {
		r := rk.k.Builder.Retrieve(ctx, rk.p, rk.w.WorkspaceID, rk.prompt)
		rk.retrieval = &r
	}
	skip := make(map[string]bool, len(rk.thisRun))
	for k := range rk.thisRun {
		skip[k] = true
	}
	retrieval := rk.retrieval
	rk.mu.Unlock()

	ac := rk.k.Builder.Build(ctx, agentcontext.ContextRequest{Principal: rk.p, WorkspaceID: rk.w.WorkspaceID, WorkflowID: rk.w.ID,
		Prompt: rk.prompt, Summary: req.Summary, Model: req.Model, Budget: req.Budget, Retrieval: retrieval, SkipTools: skip})
	// A stopped run's searches fail for the stop, not for the store.
	if ac.Degraded != nil && ctx.Err() == nil {
		rk.degraded(ctx, ac.Degraded)
	}
	rk.s.logger.Debug("rounds: round context", "workflow", rk.w.ID, "round", req.Round, "budget", req.Budget,
		"tokens", ac.Tokens, "placed", ac.Placed, "truncated", ac.Truncated, "dropped", ac.Dropped)
	return agent.RoundContext{Text: ac.Text, Usage: usage}, nil
}

// degraded tells the workflow, once per run, that the knowledge store is
// unavailable (a degraded round, not a failed one): a warning in its log and a status event on
// its stream. The agent answers without retrieved context.
func (rk *roundKnowledge) degraded(ctx context.Context, cause error) {
	rk.mu.Lock()
	warned := rk.warned
	rk.warned = true
	rk.mu.Unlock()
	if warned {
		return
	}
	bg := context.WithoutCancel(ctx)
	rk.s.logger.Warn("rounds: knowledge store unavailable; the round runs without retrieved context", "workflow", rk.w.ID, "err", cause)
	rk.s.log(bg, rk.p, rk.w.ID, workflows.LogWarning, "Knowledge store unavailable: the agent answers without document context ("+cause.Error()+")", 0)
	if _, err := rk.s.wf.Append(bg, rk.p, rk.w.ID, workflows.EventStatus, workflows.StatusData{Status: workflows.StatusRunning,
		Label: "Knowledge store unavailable: answering without document context"}); err != nil {
		rk.s.logger.Warn("rounds: event", "workflow", rk.w.ID, "err", err)
	}
}

// Bounds of what the entity cache keeps from one extraction.
const (
	maxEntities          = 30
	maxEntityKeyBytes    = 100
	maxEntityValueBytes  = 500
	entityPromptMaxBytes = 12000
)

const entityInstruction = "Extract the key facts from these tool results that later steps of the conversation may need: " +
	"names, amounts, dates, identifiers, decisions. Reply with one JSON object only, mapping a short camelCase key to a " +
	`string value, e.g. {"company": "Acme AG", "revenueQ4": "12.5M CHF"}; reply {} when there is nothing worth keeping.`

// extractEntities is the entity cache's extra model call over the tool
// results of the last round(s): its facts go into the workflow's memory
// (keys "entity:<name>", source extraction). A failed call or malformed
// reply is logged and ignored; the round goes on. It returns the call's
// usage, which counts toward the workflow's budget.
func (rk *roundKnowledge) extractEntities(ctx context.Context, results []string) modeluse.Usage {
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: rk.p.TenantID, WorkspaceID: rk.w.WorkspaceID, UserID: rk.p.UserID,
		WorkflowID: rk.w.ID, Purpose: "entities"})
	text := memory.Clip(strings.Join(results, "\n\n"), entityPromptMaxBytes)
	resp, err := rk.k.Model.Chat(ctx, llm.ChatRequest{Operation: modeluse.OpSummary, Messages: []llm.Message{
		{Role: "system", Content: entityInstruction},
		{Role: "user", Content: "Tool results:\n" + text},
	}}, nil)
	if err != nil {
		rk.s.logger.Warn("rounds: entity extraction failed; ignored", "workflow", rk.w.ID, "err", err)
		return resp.Usage
	}
	facts, err := parseEntities(resp.Message.Content)
	if err != nil {
		rk.s.logger.Warn("rounds: entity extraction gave no usable JSON; ignored", "workflow", rk.w.ID, "err", err)
		return resp.Usage
	}
	for _, f := range facts {
		if _, err := rk.k.Memory.UpsertMemory(ctx, rk.p, kindex.Memory{WorkflowID: rk.w.ID, Key: memory.EntityPrefix + f[0],
			Value: f[1], Source: kindex.MemoryExtraction}); err != nil {
			rk.s.logger.Warn("rounds: keeping an entity", "workflow", rk.w.ID, "key", f[0], "err", err)
		}
	}
	return resp.Usage
}

// errNoObject: the model's reply holds no JSON object.
var errNoObject = errors.New("no JSON object in the reply")

// parseEntities reads the entity model's reply: one JSON object, perhaps in
// a code fence or with words around it, whose string, number and boolean
// values become facts (key, value) in key order; other values are skipped,
// keys and values bounded.
func parseEntities(reply string) ([][2]string, error) {
	start, end := strings.IndexByte(reply, '{'), strings.LastIndexByte(reply, '}')
	if start < 0 || end < start {
		return nil, errNoObject
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(reply[start:end+1]), &obj); err != nil {
		return nil, fmt.Errorf("entities: %w", err)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][2]string
	for _, k := range keys {
		key := strings.TrimSpace(k)
		if key == "" || len(key) > maxEntityKeyBytes {
			continue
		}
		var v string
		switch x := obj[k].(type) {
		case string:
			v = strings.TrimSpace(x)
		case float64:
			v = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			v = strconv.FormatBool(x)
		default:
			continue
		}
		if v == "" {
			continue
		}
		out = append(out, [2]string{key, memory.Clip(v, maxEntityValueBytes)})
		if len(out) == maxEntities {
			break
		}
	}
	return out, nil
}

package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/workflows"
)

// WorkflowCosts is what the model capabilities need of the workflows: the
// workflow's spending so far (for its budget) and a way to add a tool's
// model cost to it.
type WorkflowCosts interface {
	Get(ctx context.Context, p tenancy.Principal, id string) (workflows.Workflow, error)
	Update(ctx context.Context, p tenancy.Principal, id string, u workflows.Update) (workflows.Workflow, error)
}

// Capabilities serves the host capabilities `model` (info, count, complete)
// and `images` (generate) to plugins. Every call acts for the caller of the
// tool call (toolcall.From): it is billed to the caller's tenant, workspace,
// user and workflow with the purpose "tool:<tool>", and its cost is added to
// the workflow's statistics, so a workflow's budget covers the model calls
// its tools make too.
//
// The fields may be set after the plugin host is built (the host and the
// services its capabilities reach are built in a cycle), but before the
// first call; a call finding Client nil answers that no model is configured.
type Capabilities struct {
	// Client makes the calls; nil means no model is configured.
	Client *Client
	// Workflows receives each call's cost; nil leaves workflows alone.
	Workflows WorkflowCosts
	// MaxWorkflowCost refuses calls of a workflow that has spent this
	// much (0: no budget), the same budget as the agent loop's.
	MaxWorkflowCost money.Amount
	// Operation is the chain tools' completions use (default OpSummary,
	// which falls back to the agent's chain).
	Operation modeluse.Operation
	// Logger receives failures to account a cost (default: discard).
	Logger *slog.Logger
}

// DefaultMaxOutputTokens caps one completion a tool asks for; model.info
// reports the smaller of it and a quarter of the context window.
const DefaultMaxOutputTokens = 4096

func (h *Capabilities) op() modeluse.Operation {
	if h.Operation == "" {
		return modeluse.OpSummary
	}
	return h.Operation
}

func (h *Capabilities) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

// ModelCapability is capability "model": agenthost:model info, count and
// complete (docs/plugin-abi.md's JSON convention).
func (h *Capabilities) ModelCapability() wasm.Capability {
	mod := wasm.CapabilityPrefix + "model"
	return wasm.Capability{
		Name:        "model",
		Description: "ask the workspace's language model, and read images with its OCR model (calls are billed to the user running the tool)",
		Functions: []wasm.HostFunction{
			wasm.JSONFunction(mod, "info", false, h.info),
			wasm.JSONFunction(mod, "count", false, h.count),
			wasm.JSONFunction(mod, "complete", false, h.complete),
			wasm.JSONFunction(mod, "ocr", false, h.ocr),
		},
	}
}

// ImagesCapability is capability "images": agenthost:images generate.
func (h *Capabilities) ImagesCapability() wasm.Capability {
	return wasm.Capability{
		Name:        "images",
		Description: "generate images with the provider's image model (billed to the user running the tool)",
		Functions: []wasm.HostFunction{
			wasm.JSONFunction(wasm.CapabilityPrefix+"images", "generate", false, h.generate),
		},
	}
}

// ModelInfoResult is model.info's answer.
type ModelInfoResult struct {
	Model           string `json:"model"`
	ContextTokens   int    `json:"contextTokens"`
	MaxOutputTokens int    `json:"maxOutputTokens"`
}

// caller returns the tool call's caller and the configured model, or the
// capability error that refuses the call.
func (h *Capabilities) caller(ctx context.Context, op modeluse.Operation) (toolcall.Caller, ModelInfo, error) {
	c, ok := toolcall.From(ctx)
	if !ok || c.Principal.TenantID == "" {
		return c, ModelInfo{}, &wasm.CapabilityError{Code: "no_caller", Message: "this call runs for nobody (no user, workspace or workflow), so it may not use models"}
	}
	if h.Client == nil || !h.Client.Configured(op) {
		return c, ModelInfo{}, &wasm.CapabilityError{Code: "no_model", Message: notConfigured(op).Error()}
	}
	m, _ := h.Client.Model(op)
	return c, m, nil
}

func maxOutput(m ModelInfo) int { return max(1, min(DefaultMaxOutputTokens, m.ContextWindow/4)) }

func (h *Capabilities) info(ctx context.Context, _ *wasm.Call, _ json.RawMessage) (any, error) {
	_, m, err := h.caller(ctx, h.op())
	if err != nil {
		return nil, err
	}
	return ModelInfoResult{Model: m.Name, ContextTokens: m.ContextWindow, MaxOutputTokens: maxOutput(m)}, nil
}

func (h *Capabilities) count(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	_, m, err := h.caller(ctx, h.op())
	if err != nil {
		return nil, err
	}
	var r struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(req, &r); err != nil || r.Text == nil {
		return nil, invalid("count wants {\"text\": \"...\"}")
	}
	return struct {
		Tokens int `json:"tokens"`
	}{CountTokens(m.Name, *r.Text)}, nil
}

// CompleteResult is model.complete's answer.
type CompleteResult struct {
	Content          string       `json:"content"`
	FinishReason     string       `json:"finishReason"`
	PromptTokens     int          `json:"promptTokens"`
	CompletionTokens int          `json:"completionTokens"`
	CostCHF          money.Amount `json:"costCHF"`
	Model            string       `json:"model"`
}

func (h *Capabilities) complete(ctx context.Context, call *wasm.Call, req json.RawMessage) (any, error) {
	c, m, err := h.caller(ctx, h.op())
	if err != nil {
		return nil, err
	}
	var r struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		MaxTokens int    `json:"maxTokens"`
		Purpose   string `json:"purpose"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, invalid("complete: " + err.Error())
	}
	if len(r.Messages) == 0 {
		return nil, invalid("complete needs at least one message")
	}
	msgs := make([]Message, len(r.Messages))
	for i, mm := range r.Messages {
		switch mm.Role {
		case RoleSystem, RoleUser, RoleAssistant:
		default:
			return nil, invalid(fmt.Sprintf("messages[%d].role %q (want system, user or assistant)", i, mm.Role))
		}
		msgs[i] = Message{Role: mm.Role, Content: mm.Content}
	}
	limit := maxOutput(m)
	if r.MaxTokens < 0 || r.MaxTokens > limit {
		return nil, invalid(fmt.Sprintf("maxTokens %d (want 1 to %d for %s)", r.MaxTokens, limit, m.Name))
	}
	if r.MaxTokens == 0 {
		r.MaxTokens = limit
	}
	// A request that cannot fit is refused before it costs anything, with
	// the figures a plugin needs to split its input (model-aware chunking).
	if n := CountMessageTokens(m.Name, msgs, nil); n+r.MaxTokens > m.ContextWindow {
		return nil, &wasm.CapabilityError{Code: "context_exceeded", Message: fmt.Sprintf(
			"the messages take %d tokens and %d are asked for the answer, more than the %d of %s's context: split the input (model.info, model.count)",
			n, r.MaxTokens, m.ContextWindow, m.Name)}
	}
	if err := h.checkBudget(ctx, c); err != nil {
		return nil, err
	}
	purpose := "tool:" + call.Tool
	if p := strings.TrimSpace(r.Purpose); p != "" {
		purpose += "/" + clipPurpose(p)
	}
	actx := WithAttribution(ctx, Attribution{TenantID: c.Principal.TenantID, WorkspaceID: c.WorkspaceID,
		UserID: c.Principal.UserID, WorkflowID: c.WorkflowID, Purpose: purpose})
	resp, err := h.Client.Chat(actx, ChatRequest{Operation: h.op(), Messages: msgs, MaxTokens: r.MaxTokens}, nil)
	h.account(ctx, c, resp.Usage)
	if err != nil {
		return nil, modelError(err)
	}
	return CompleteResult{Content: resp.Message.Content, FinishReason: resp.FinishReason, PromptTokens: resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens, CostCHF: resp.Usage.Cost, Model: resp.Usage.Model}, nil
}

// GeneratedImage is one picture of images.generate's answer.
type GeneratedImage struct {
	MIMEType      string `json:"mimeType"`
	Data          string `json:"data"`
	RevisedPrompt string `json:"revisedPrompt,omitempty"`
}

func (h *Capabilities) generate(ctx context.Context, call *wasm.Call, req json.RawMessage) (any, error) {
	c, _, err := h.caller(ctx, modeluse.OpImage)
	if err != nil {
		return nil, err
	}
	var r struct {
		Prompt string `json:"prompt"`
		Size   string `json:"size"`
		N      int    `json:"n"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, invalid("generate: " + err.Error())
	}
	if err := h.checkBudget(ctx, c); err != nil {
		return nil, err
	}
	actx := WithAttribution(ctx, Attribution{TenantID: c.Principal.TenantID, WorkspaceID: c.WorkspaceID,
		UserID: c.Principal.UserID, WorkflowID: c.WorkflowID, Purpose: "tool:" + call.Tool})
	imgs, u, err := h.Client.GenerateImage(actx, ImageRequest{Prompt: r.Prompt, Size: r.Size, N: r.N})
	h.account(ctx, c, u)
	if err != nil {
		return nil, modelError(err)
	}
	out := struct {
		Images  []GeneratedImage `json:"images"`
		CostCHF money.Amount     `json:"costCHF"`
		Model   string           `json:"model"`
	}{CostCHF: u.Cost, Model: u.Model}
	for _, im := range imgs {
		out.Images = append(out.Images, GeneratedImage{MIMEType: im.MIMEType, Data: base64.StdEncoding.EncodeToString(im.Data), RevisedPrompt: im.RevisedPrompt})
	}
	return out, nil
}

// checkBudget refuses a call of a workflow whose spending reached the
// budget. Inside an agent run the spending is the run's tally (RunCost),
// which also holds the loop's own model calls not yet written to the
// workflow; outside one (a tool called through the API) it is the
// workflow's recorded cost.
func (h *Capabilities) checkBudget(ctx context.Context, c toolcall.Caller) error {
	if h.MaxWorkflowCost <= 0 || c.WorkflowID == "" {
		return nil
	}
	var spent money.Amount
	if rc, ok := RunCostFrom(ctx); ok {
		spent = rc.Spent()
	} else {
		if h.Workflows == nil {
			return nil
		}
		w, err := h.Workflows.Get(ctx, c.Principal, c.WorkflowID)
		if err != nil {
			return fmt.Errorf("model: the caller's workflow: %w", err)
		}
		spent = w.Stats.CostCHF
	}
	if spent >= h.MaxWorkflowCost {
		return &wasm.CapabilityError{Code: "budget_exceeded", Message: fmt.Sprintf(
			"workflow %s has spent CHF %.4f of its CHF %.2f budget", c.WorkflowID, spent.CHF(), h.MaxWorkflowCost.CHF())}
	}
	return nil
}

// account adds what a call cost to the caller's workflow, and to the run's
// tally when an agent run made the call; the usage record itself is
// written by the client's meter.
func (h *Capabilities) account(ctx context.Context, c toolcall.Caller, u modeluse.Usage) {
	if c.WorkflowID == "" || (u.Cost == 0 && u.PromptTokens+u.CompletionTokens == 0) {
		return
	}
	if rc, ok := RunCostFrom(ctx); ok {
		rc.Add(u.Cost)
	}
	if h.Workflows == nil {
		return
	}
	st := workflows.Stats{CostCHF: u.Cost, TokensUsed: int64(u.PromptTokens + u.CompletionTokens)}
	if _, err := h.Workflows.Update(context.WithoutCancel(ctx), c.Principal, c.WorkflowID, workflows.Update{Stats: st}); err != nil {
		h.logger().Error("model capability: adding a tool's model cost to its workflow", "workflow", c.WorkflowID, "err", err)
	}
}

// modelError keeps the kind of a model failure visible to the plugin.
func modelError(err error) error {
	code := "model_error"
	switch {
	case errors.Is(err, ErrNotConfigured):
		code = "no_model"
	case errors.Is(err, ErrInvalidRequest):
		code = "invalid_request"
	case errors.Is(err, ErrUnavailable):
		code = "unavailable"
	}
	return &wasm.CapabilityError{Code: code, Message: err.Error()}
}

func invalid(msg string) error { return &wasm.CapabilityError{Code: "invalid_request", Message: msg} }

func clipPurpose(s string) string {
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}

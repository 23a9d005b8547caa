package rounds

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Model choice (docs/agent.md, "Model choice"): the agent chain's models are
// the catalogue; a workspace's admin narrows it (none kept: every model of
// the chain is allowed); a conversation picks one of those allowed, and its
// rounds start with it, the rest of the chain behind it as fallback.

// ModelCatalog is the host's configured agent models (*llm.Client is one).
type ModelCatalog interface {
	Chain(op modeluse.Operation) []llm.ModelInfo
}

// ModelStore keeps the allowed models of a workspace and a conversation's
// choice (the store implements it beside ToolSets).
type ModelStore interface {
	WorkspaceModels(ctx context.Context, p tenancy.Principal, workspaceID string) ([]string, error)
	SetWorkspaceModels(ctx context.Context, p tenancy.Principal, workspaceID string, ids []string) error
	WorkflowModel(ctx context.Context, p tenancy.Principal, workflowID string) (string, error)
	SetWorkflowModel(ctx context.Context, p tenancy.Principal, workflowID, model string) error
}

// ErrModelNotAllowed: the model is not configured or not allowed in the
// workspace.
var ErrModelNotAllowed = errors.New("the model is not allowed in this workspace")

// ModelOption is one model a conversation may pick, as the API shows it.
type ModelOption struct {
	// ID is provider/model, what a choice names.
	ID            string `json:"id"`
	Provider      string `json:"provider"`
	Name          string `json:"name"`
	ContextWindow int    `json:"contextWindow"`
	Tools         bool   `json:"tools"`
	Images        bool   `json:"images"`
	// Prices per million tokens, exact decimals in CHF ("2.5").
	InputCHFPer1M  string `json:"inputCHFPer1M"`
	OutputCHFPer1M string `json:"outputCHFPer1M"`
	// Default: the chain's first, used when a conversation chose none.
	Default bool `json:"default"`
}

// WorkspaceModels is a workspace's model setting.
type WorkspaceModels struct {
	// Allowed are the models its conversations may pick, chain order.
	Allowed []ModelOption `json:"allowed"`
	// Restricted: an admin named the allowed models; false: every
	// configured model is allowed.
	Restricted bool `json:"restricted"`
	// Configured are all the host's agent models (for the admin's choice).
	Configured []ModelOption `json:"configured"`
}

// WithModels gives the service the host's model catalogue; without it (or
// with a store that keeps no models) conversations use the chain as it is.
func (s *Service) WithModels(c ModelCatalog) *Service {
	s.catalog = c
	return s
}

func option(m llm.ModelInfo, first bool) ModelOption {
	in, out := m.Price()
	return ModelOption{ID: m.ID(), Provider: m.Provider, Name: m.Name, ContextWindow: m.ContextWindow, Tools: m.FunctionCalling,
		Images: m.Images, InputCHFPer1M: in.String(), OutputCHFPer1M: out.String(), Default: first}
}

func (s *Service) modelStore() (ModelStore, error) {
	st, ok := s.toolSets.(ModelStore)
	if !ok || s.catalog == nil {
		return nil, ErrNoSettings
	}
	return st, nil
}

// Models returns the models a workspace allows and those configured, to a
// member of it.
func (s *Service) Models(ctx context.Context, p tenancy.Principal, workspaceID string) (WorkspaceModels, error) {
	st, err := s.modelStore()
	if err != nil {
		return WorkspaceModels{}, err
	}
	ids, err := st.WorkspaceModels(ctx, p, workspaceID)
	if err != nil {
		return WorkspaceModels{}, err
	}
	out := WorkspaceModels{Allowed: []ModelOption{}, Configured: []ModelOption{}, Restricted: len(ids) > 0}
	for i, m := range s.catalog.Chain(modeluse.OpAgent) {
		o := option(m, i == 0)
		out.Configured = append(out.Configured, o)
		if len(ids) == 0 || slices.Contains(ids, o.ID) {
			out.Allowed = append(out.Allowed, o)
		}
	}
	return out, nil
}

// SetModels sets the models a workspace allows (its managers and the
// tenant's admin); none allows every configured model. A model that is not
// configured is refused.
func (s *Service) SetModels(ctx context.Context, p tenancy.Principal, workspaceID string, ids []string) (WorkspaceModels, error) {
	st, err := s.modelStore()
	if err != nil {
		return WorkspaceModels{}, err
	}
	for _, id := range ids {
		if !s.configured(id) {
			return WorkspaceModels{}, fmt.Errorf("%w: %w: %q is not a configured agent model", tenancy.ErrInvalid, ErrModelNotAllowed, id)
		}
	}
	if err := st.SetWorkspaceModels(ctx, p, workspaceID, ids); err != nil {
		return WorkspaceModels{}, err
	}
	return s.Models(ctx, p, workspaceID)
}

func (s *Service) configured(id string) bool {
	return slices.ContainsFunc(s.catalog.Chain(modeluse.OpAgent), func(m llm.ModelInfo) bool { return m.ID() == id })
}

// allowed checks that id ("" : the default, always allowed) may be used in
// the workspace now.
func (s *Service) allowed(ctx context.Context, st ModelStore, p tenancy.Principal, workspaceID, id string) error {
	if id == "" {
		return nil
	}
	if !s.configured(id) {
		return fmt.Errorf("%w: %w: %q is not a configured agent model", tenancy.ErrInvalid, ErrModelNotAllowed, id)
	}
	ids, err := st.WorkspaceModels(ctx, p, workspaceID)
	if err != nil {
		return err
	}
	if len(ids) > 0 && !slices.Contains(ids, id) {
		return fmt.Errorf("%w: %w: %q (allowed: %v)", tenancy.ErrInvalid, ErrModelNotAllowed, id, ids)
	}
	return nil
}

// ConversationModel returns the model a conversation chose ("" : none, the
// default model answers).
func (s *Service) ConversationModel(ctx context.Context, p tenancy.Principal, workflowID string) (string, error) {
	st, err := s.modelStore()
	if err != nil {
		return "", err
	}
	return st.WorkflowModel(ctx, p, workflowID)
}

// SetConversationModel changes the model a conversation uses from its next
// round on ("" : back to the default); it must be allowed in the
// conversation's workspace.
func (s *Service) SetConversationModel(ctx context.Context, p tenancy.Principal, workflowID, id string) error {
	st, err := s.modelStore()
	if err != nil {
		return err
	}
	w, err := s.wf.Get(ctx, p, workflowID)
	if err != nil {
		return err
	}
	if err := s.allowed(ctx, st, p, w.WorkspaceID, id); err != nil {
		return err
	}
	return st.SetWorkflowModel(ctx, p, workflowID, id)
}

// roundModel returns ctx carrying the conversation's chosen model for the
// round's calls. A choice no longer allowed (the admin narrowed the list) is
// an error: the person chose it, so the round does not quietly use another.
func (s *Service) roundModel(ctx context.Context, p tenancy.Principal, workspaceID, workflowID string) (context.Context, error) {
	st, err := s.modelStore()
	if err != nil {
		return ctx, nil // no choice kept: the chain as configured
	}
	id, err := st.WorkflowModel(ctx, p, workflowID)
	if err != nil {
		return ctx, fmt.Errorf("the conversation's model: %w", err)
	}
	if err := s.allowed(ctx, st, p, workspaceID, id); err != nil {
		return ctx, fmt.Errorf("the conversation's model: %w", err)
	}
	return llm.WithModel(ctx, id), nil
}

// checkRoundModel refuses a round, before the workflow changes, whose model
// (the one asked for, else the conversation's kept choice) the workspace
// does not allow.
func (s *Service) checkRoundModel(ctx context.Context, p tenancy.Principal, workspaceID string, req StartRequest) error {
	st, err := s.modelStore()
	if err != nil {
		if req.Model != "" {
			return fmt.Errorf("%w: %w: this host offers no model choice", tenancy.ErrInvalid, ErrModelNotAllowed)
		}
		return nil
	}
	id := req.Model
	if id == "" && req.WorkflowID != "" {
		if id, err = st.WorkflowModel(ctx, p, req.WorkflowID); err != nil {
			return err
		}
	}
	return s.allowed(ctx, st, p, workspaceID, id)
}

// keepRoundModel keeps the model a round asked for with its conversation.
func (s *Service) keepRoundModel(ctx context.Context, p tenancy.Principal, workflowID, id string) error {
	if id == "" {
		return nil
	}
	st, err := s.modelStore()
	if err != nil {
		return err
	}
	return st.SetWorkflowModel(ctx, p, workflowID, id)
}

// withRoundModel is roundModel for a round under way (also one taken over
// from another host): the choice was checked when the round started, so one
// the admin has since disallowed is logged and the default model answers.
func (s *Service) withRoundModel(ctx context.Context, p tenancy.Principal, workspaceID, workflowID string) context.Context {
	mctx, err := s.roundModel(ctx, p, workspaceID, workflowID)
	if err != nil {
		// A round stopped or deleted meanwhile ends anyway: nothing to say.
		if ctx.Err() == nil {
			s.logger.Warn("rounds: the conversation's model; the default model answers", "workflow", workflowID, "err", err)
		}
		return ctx
	}
	return mctx
}

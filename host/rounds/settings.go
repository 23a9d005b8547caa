package rounds

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/tenancy"
)

// SettingsStore keeps a workspace's own agent settings (the agent
// configuration per workspace). The service finds it on its ToolSets (the
// store implements both): a workspace's settings live beside its tool set.
type SettingsStore interface {
	// WorkspaceEntityCache is the workspace's entity-cache setting, nil
	// when it follows the host's default.
	WorkspaceEntityCache(ctx context.Context, p tenancy.Principal, workspaceID string) (*bool, error)
	// SetWorkspaceEntityCache sets it (nil: back to the default); it is for
	// the workspace's managers and the tenant's admin.
	SetWorkspaceEntityCache(ctx context.Context, p tenancy.Principal, workspaceID string, enabled *bool) error
	// WorkspaceLanguages are the languages the workspace searches in
	// (ISO 639-1 codes; none: every analysed language).
	WorkspaceLanguages(ctx context.Context, p tenancy.Principal, workspaceID string) ([]string, error)
	// SetWorkspaceLanguages sets them; it refuses a language the search
	// does not analyse.
	SetWorkspaceLanguages(ctx context.Context, p tenancy.Principal, workspaceID string, langs []string) error
	// WorkspaceMCPExternalTools says whether the workspace's MCP endpoint
	// offers its external MCP servers' tools.
	WorkspaceMCPExternalTools(ctx context.Context, p tenancy.Principal, workspaceID string) (bool, error)
	// SetWorkspaceMCPExternalTools sets it (managers and the tenant's admin).
	SetWorkspaceMCPExternalTools(ctx context.Context, p tenancy.Principal, workspaceID string, offered bool) error
}

// ErrNoSettings: the service was built without a settings store.
var ErrNoSettings = errors.New("this host keeps no workspace settings")

// Where a workspace's entity-cache setting comes from.
const (
	// SettingWorkspace: the workspace's own setting.
	SettingWorkspace = "workspace"
	// SettingDefault: the host's default (AGENTHOST_AGENT_ENTITY_CACHE).
	SettingDefault = "default"
	// SettingUnavailable: the host has no model or memory store for the
	// entity cache, so it is off whatever is set.
	SettingUnavailable = "unavailable"
)

// Settings is a workspace's agent configuration as its rounds see it.
type Settings struct {
	// EntityCacheEnabled says whether the workspace's rounds run the
	// entity cache (an extra summary-model call after each round
	// with tool results).
	EntityCacheEnabled bool `json:"entityCacheEnabled"`
	// EntityCacheSource says where that comes from: "workspace",
	// "default" or "unavailable".
	EntityCacheSource string `json:"entityCacheSource"`
	// EntityCacheDefault is the host's default for workspaces without a
	// setting of their own.
	EntityCacheDefault bool `json:"entityCacheDefault"`
	// SearchLanguages are the languages the workspace's searches are
	// analysed as (empty: every analysed language).
	SearchLanguages []string `json:"searchLanguages"`
	// MCPExternalTools says whether the workspace's MCP endpoint offers
	// the tools of its external MCP servers beside its own (its agent
	// runs have them either way); true unless a manager left them out.
	MCPExternalTools bool `json:"mcpExternalTools"`
}

// SettingsUpdate changes a workspace's settings. EntityCacheEnabled nil
// (JSON null or absent) returns the workspace to the host's default.
type SettingsUpdate struct {
	EntityCacheEnabled *bool `json:"entityCacheEnabled"`
	// SearchLanguages replaces the workspace's search languages; nil
	// (absent) leaves them as they are, empty means every language.
	SearchLanguages *[]string `json:"searchLanguages"`
	// MCPExternalTools sets whether the MCP endpoint offers the external
	// MCP servers' tools; nil (absent) leaves it as it is.
	MCPExternalTools *bool `json:"mcpExternalTools"`
}

func (s *Service) settingsStore() (SettingsStore, error) {
	st, ok := s.toolSets.(SettingsStore)
	if !ok {
		return nil, ErrNoSettings
	}
	return st, nil
}

// entityDefaults are the host's entity-cache default and whether the host
// can run the entity cache at all (a knowledge store with a model and a
// memory store).
func (s *Service) entityDefaults() (def, capable bool) {
	if s.know == nil || s.know.Model == nil || s.know.Memory == nil {
		return false, false
	}
	return s.know.EntityCache, true
}

func (s *Service) settings(own *bool) Settings {
	def, capable := s.entityDefaults()
	out := Settings{EntityCacheEnabled: def, EntityCacheSource: SettingDefault, EntityCacheDefault: def}
	switch {
	case !capable:
		out.EntityCacheEnabled, out.EntityCacheSource = false, SettingUnavailable
	case own != nil:
		out.EntityCacheEnabled, out.EntityCacheSource = *own, SettingWorkspace
	}
	return out
}

// Settings returns a workspace's agent settings to a member of it.
func (s *Service) Settings(ctx context.Context, p tenancy.Principal, workspaceID string) (Settings, error) {
	st, err := s.settingsStore()
	if err != nil {
		return Settings{}, err
	}
	own, err := st.WorkspaceEntityCache(ctx, p, workspaceID)
	if err != nil {
		return Settings{}, err
	}
	out := s.settings(own)
	if out.SearchLanguages, err = st.WorkspaceLanguages(ctx, p, workspaceID); err != nil {
		return Settings{}, err
	}
	if out.SearchLanguages == nil {
		out.SearchLanguages = []string{}
	}
	if out.MCPExternalTools, err = st.WorkspaceMCPExternalTools(ctx, p, workspaceID); err != nil {
		return Settings{}, err
	}
	return out, nil
}

// SetSettings changes a workspace's agent settings (its managers and the
// tenant's admin) and returns them as the next round will see them. The
// setting is kept even where the host cannot run the entity cache now.
func (s *Service) SetSettings(ctx context.Context, p tenancy.Principal, workspaceID string, u SettingsUpdate) (Settings, error) {
	st, err := s.settingsStore()
	if err != nil {
		return Settings{}, err
	}
	if u.SearchLanguages != nil {
		if err := st.SetWorkspaceLanguages(ctx, p, workspaceID, *u.SearchLanguages); err != nil {
			return Settings{}, err
		}
	}
	if u.MCPExternalTools != nil {
		if err := st.SetWorkspaceMCPExternalTools(ctx, p, workspaceID, *u.MCPExternalTools); err != nil {
			return Settings{}, err
		}
	}
	if err := st.SetWorkspaceEntityCache(ctx, p, workspaceID, u.EntityCacheEnabled); err != nil {
		return Settings{}, err
	}
	return s.Settings(ctx, p, workspaceID)
}

// entityCache decides whether a round of the workspace runs the entity
// cache: its own setting, else the host's default. A failure to read the
// setting falls back to the default, logged: the round goes on.
func (s *Service) entityCache(ctx context.Context, p tenancy.Principal, workspaceID string) bool {
	def, capable := s.entityDefaults()
	if !capable {
		return false
	}
	st, err := s.settingsStore()
	if err != nil {
		return def
	}
	own, err := st.WorkspaceEntityCache(ctx, p, workspaceID)
	if err != nil {
		s.logger.Warn("rounds: reading the entity-cache setting; the host's default applies", "workspace", workspaceID, "err", fmt.Errorf("settings: %w", err))
		return def
	}
	if own != nil {
		return *own
	}
	return def
}

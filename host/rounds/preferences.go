package rounds

import (
	"context"

	"github.com/agenthost/agenthost/host/tenancy"
)

// Preferences (docs/ui.md, "Settings and themes"): a person's custom
// instructions go with every round of theirs, and a new conversation of
// theirs that names no model uses their default model where the workspace
// allows it.

// PreferenceStore keeps people's own settings (the store implements it
// beside ToolSets); without it rounds carry no personal settings.
type PreferenceStore interface {
	UserPreferences(ctx context.Context, p tenancy.Principal) (tenancy.Preferences, error)
}

// preferences returns the principal's settings, or none when they cannot
// be read: a round is not refused for want of its person's preferences.
func (s *Service) preferences(ctx context.Context, p tenancy.Principal) tenancy.Preferences {
	st, ok := s.toolSets.(PreferenceStore)
	if !ok {
		return tenancy.Preferences{}
	}
	prefs, err := st.UserPreferences(ctx, p)
	if err != nil {
		if ctx.Err() == nil { // a round stopped or deleted meanwhile ends anyway
			s.logger.Warn("rounds: the person's preferences; the round goes without them", "user", p.UserID, "err", err)
		}
		return tenancy.Preferences{}
	}
	return prefs
}

// personalModel is the model a new conversation that names none starts
// with: the person's default model when the workspace allows it now, else
// "" (the workspace's default). A default the workspace does not allow is
// not an error: the person set it for all their workspaces, and this one
// offers other models.
func (s *Service) personalModel(ctx context.Context, p tenancy.Principal, workspaceID string) string {
	st, err := s.modelStore()
	if err != nil {
		return ""
	}
	id := s.preferences(ctx, p).DefaultModel
	if id == "" || s.allowed(ctx, st, p, workspaceID, id) != nil {
		return ""
	}
	return id
}

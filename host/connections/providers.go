package connections

import (
	"slices"
	"strings"
)

// DefaultProviders are the providers every host knows without
// configuration: those connected with an API token or password, whose
// credentials go to the connection's own site only. OAuth providers need
// the operator's client registration (Options.Providers).
func DefaultProviders() []Provider {
	return []Provider{
		// Jira Cloud: basic authentication with the account's e-mail and an
		// API token, against the connection's site (https://NAME.atlassian.net).
		{Name: "jira"},
	}
}

// ProviderInfo is what any signed-in user may know of a configured
// provider: its name and how a connection to it is made. Nothing of the
// operator's client registration (id, secret, URLs) is in it.
type ProviderInfo struct {
	Name string `json:"name"`
	// Auth lists the kinds of connection the provider takes: oauth2 when
	// the operator registered an OAuth client, and token and basic.
	Auth []string `json:"auth"`
	// NeedsBaseURL: a token or basic connection must name its site (the
	// provider has no API root or hosts of its own, as Jira Cloud).
	NeedsBaseURL bool `json:"needsBaseUrl"`
}

// Providers lists the configured providers by name.
func (s *Service) Providers() []ProviderInfo {
	out := make([]ProviderInfo, 0, len(s.providers))
	for _, p := range s.providers {
		auth := []string{AuthToken, AuthBasic}
		if p.OAuth != nil {
			auth = append([]string{AuthOAuth2}, auth...)
		}
		out = append(out, ProviderInfo{Name: p.Name, Auth: auth, NeedsBaseURL: p.BaseURL == "" && len(p.Hosts) == 0})
	}
	slices.SortFunc(out, func(a, b ProviderInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

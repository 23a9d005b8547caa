package connections

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

// KnownOAuth returns what the host knows of a well-known OAuth provider:
// its endpoints, API hosts, API root and the scopes its built-in connector
// needs. The operator registers only the client (AGENTHOST_OAUTH_<NAME>_
// CLIENT_ID, _CLIENT_SECRET, _REDIRECT_URL); any variable set overrides.
func KnownOAuth(name string) (Provider, bool) {
	switch name {
	case "google":
		// Google: Drive v3 on www.googleapis.com, Gmail v1 on gmail.googleapis.com.
		return Provider{Name: name, Hosts: []string{"www.googleapis.com", "gmail.googleapis.com"}, BaseURL: "https://www.googleapis.com",
			OAuth: &OAuth{AuthURL: "https://accounts.google.com/o/oauth2/v2/auth", TokenURL: "https://oauth2.googleapis.com/token",
				Scopes: []string{"https://www.googleapis.com/auth/drive", "https://www.googleapis.com/auth/gmail.send",
					"https://www.googleapis.com/auth/gmail.readonly"}}}, true
	}
	return Provider{}, false
}

// withDefaults fills what the operator left unset from d.
func withDefaults(p, d Provider) Provider {
	if len(p.Hosts) == 0 {
		p.Hosts = d.Hosts
	}
	if p.BaseURL == "" {
		p.BaseURL = d.BaseURL
	}
	if p.OAuth != nil && d.OAuth != nil {
		if p.OAuth.AuthURL == "" {
			p.OAuth.AuthURL = d.OAuth.AuthURL
		}
		if p.OAuth.TokenURL == "" {
			p.OAuth.TokenURL = d.OAuth.TokenURL
		}
		if len(p.OAuth.Scopes) == 0 {
			p.OAuth.Scopes = d.OAuth.Scopes
		}
	}
	return p
}

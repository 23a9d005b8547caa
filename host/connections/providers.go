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

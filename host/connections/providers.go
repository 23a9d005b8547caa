package connections

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/agenthost/agenthost/host/tenancy"
)

// ProviderFiles is the provider of file servers: FTP, FTPS (explicit TLS)
// and SFTP, told apart by the connection's base URL scheme
// (ftp://host:21/dir, ftps://host:21/dir, sftp://host:22/dir), whose path
// is the base directory.
const ProviderFiles = "ftp"

// DefaultProviders are the providers every host knows without
// configuration: those connected with an API token or password, whose
// credentials go to the connection's own site only. OAuth providers need
// the operator's client registration (Options.Providers).
func DefaultProviders() []Provider {
	return []Provider{
		// Jira Cloud: basic authentication with the account's e-mail and an
		// API token, against the connection's site (https://NAME.atlassian.net).
		{Name: "jira"},
		// File servers: basic authentication (account and password, or an
		// SFTP key), the host speaking the protocol (host/filetransfer).
		{Name: ProviderFiles, Schemes: []string{"ftp", "ftps", "sftp"}},
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
	// FileServer: an FTP, FTPS or SFTP server (ProviderFiles): its URL
	// names the protocol, an account and a password sign in, and an SFTP
	// connection pins the server's host key.
	FileServer bool `json:"fileServer,omitempty"`
}

// Providers lists the configured providers by name.
func (s *Service) Providers() []ProviderInfo {
	out := make([]ProviderInfo, 0, len(s.providers))
	for _, p := range s.providers {
		auth := []string{AuthToken, AuthBasic}
		if p.Name == ProviderFiles {
			auth = []string{AuthBasic} // checkFileServer: an account and a password or key
		}
		if p.OAuth != nil {
			auth = append([]string{AuthOAuth2}, auth...)
		}
		out = append(out, ProviderInfo{Name: p.Name, Auth: auth, NeedsBaseURL: needsBaseURL(p), FileServer: p.Name == ProviderFiles})
	}
	slices.SortFunc(out, func(a, b ProviderInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// needsBaseURL: a token connection to p names its site. Jira's always
// does (its site, or the gateway URL with the cloud id), even when its
// OAuth defaults name api.atlassian.com for 3LO connections.
func needsBaseURL(p Provider) bool {
	return p.Name == "jira" || (p.BaseURL == "" && len(p.Hosts) == 0)
}

// oauthDefaults are the endpoints, API root, hosts, download hosts and scopes of the OAuth
// providers the host knows by name; the operator's configuration
// (AGENTHOST_OAUTH_<NAME>_*) overrides each, and still has to name the
// client id, secret and redirect URL of its own app registration.
func oauthDefaults(name, tenant string) (Provider, bool) {
	switch name {
	case "microsoft":
		// Microsoft identity platform v2.0 for a tenant ("common": work,
		// school and personal accounts), Graph v1.0, delegated scopes of the
		// microsoft connector (offline_access for the refresh token).
		if tenant == "" {
			tenant = "common"
		}
		login := "https://login.microsoftonline.com/" + url.PathEscape(tenant) + "/oauth2/v2.0/"
		// Downloads answer 302 to a pre-authenticated URL on SharePoint or
		// OneDrive's storage, fetched without the token; a personal
		// OneDrive's is on *.microsoftpersonalcontent.com (Graph's
		// driveItem download docs, "Download the contents of a DriveItem":
		// the 302 Location is a preauthenticated URL that needs no
		// Authorization header).
		// The default scopes are those an ordinary user may consent to
		// (Graph permissions reference: none of them "Admin consent
		// required"); ChannelMessage.Read.All, which is, is asked for only
		// when the Teams service is chosen (microsoftServiceScopes).
		return Provider{Name: name, Hosts: []string{"graph.microsoft.com"}, BaseURL: "https://graph.microsoft.com/v1.0",
			DownloadHosts: []string{"*.sharepoint.com", "*.1drv.com", "*.livefilestore.com", "*.microsoftpersonalcontent.com"},
			OAuth: &OAuth{AuthURL: login + "authorize", TokenURL: login + "token", Scopes: slices.Concat([]string{"offline_access", "User.Read"},
				microsoftServiceScopes("files"), microsoftServiceScopes("outlook"))}}, true
	case "jira":
		// Atlassian OAuth 2.0 (3LO) ("OAuth 2.0 (3LO) apps"): the consent
		// at auth.atlassian.com with audience=api.atlassian.com and
		// prompt=consent, requests to api.atlassian.com/ex/jira/{cloudId}
		// (the cloud id from accessible-resources, CompleteAuthorization);
		// offline_access for a refresh token, which rotates on each use.
		return Provider{Name: name, Hosts: []string{"api.atlassian.com"}, BaseURL: "https://api.atlassian.com", AtlassianSites: true,
			OAuth: &OAuth{AuthURL: "https://auth.atlassian.com/authorize", TokenURL: "https://auth.atlassian.com/oauth/token",
				Scopes:     []string{"read:jira-work", "write:jira-work", "read:jira-user", "offline_access"},
				AuthParams: map[string]string{"audience": "api.atlassian.com", "prompt": "consent"}}}, true
	case "google":
		// Google: Drive v3 on www.googleapis.com, Gmail v1 on gmail.googleapis.com.
		return Provider{Name: name, Hosts: []string{"www.googleapis.com", "gmail.googleapis.com"}, BaseURL: "https://www.googleapis.com",
			OAuth: &OAuth{AuthURL: "https://accounts.google.com/o/oauth2/v2/auth", TokenURL: "https://oauth2.googleapis.com/token",
				Scopes: []string{"https://www.googleapis.com/auth/drive", "https://www.googleapis.com/auth/gmail.send",
					"https://www.googleapis.com/auth/gmail.readonly"},
				// A refresh token comes only with access_type=offline, and for a user
				// who consented before only with prompt=consent ("Using OAuth 2.0 for
				// Web Server Applications", developers.google.com/identity/protocols/oauth2/web-server).
				AuthParams: map[string]string{"access_type": "offline", "prompt": "consent"}}}, true
	}
	return Provider{}, false
}

// JiraOAuth is the jira provider connected by Atlassian's OAuth 2.0 (3LO)
// through the API root root (https://api.atlassian.com: the gateway and
// accessible-resources) with client c; c's empty endpoints and scopes are
// Atlassian's.
func JiraOAuth(root string, c OAuth) Provider {
	p := withDefaults(Provider{Name: "jira", OAuth: &c}, "")
	if root != "" {
		u, _ := url.Parse(root)
		p.BaseURL, p.Hosts = root, []string{u.Host}
	}
	return p
}

// microsoftServiceScopes are the delegated Graph scopes of a service of
// the microsoft connector a user may choose when connecting (incremental
// consent: the Microsoft identity platform lets an app ask for more scopes
// later, "Permissions and consent overview",
// learn.microsoft.com/entra/identity-platform/permissions-consent-overview).
// Only "teams" holds a scope that needs an administrator's consent
// (ChannelMessage.Read.All); nil for an unknown service.
func microsoftServiceScopes(service string) []string {
	switch service {
	case "files": // OneDrive and SharePoint
		return []string{"Files.ReadWrite.All", "Sites.ReadWrite.All"}
	case "outlook":
		return []string{"Mail.ReadWrite", "Mail.Send", "Calendars.Read"}
	case "teams":
		return []string{"Team.ReadBasic.All", "Channel.ReadBasic.All", "ChannelMessage.Read.All", "ChannelMessage.Send"}
	}
	return nil
}

// withDefaults fills what p leaves empty from its provider's defaults.
func withDefaults(p Provider, tenant string) Provider {
	d, ok := oauthDefaults(p.Name, tenant)
	if !ok {
		return p
	}
	if len(p.Hosts) == 0 {
		p.Hosts = d.Hosts
	}
	if len(p.DownloadHosts) == 0 {
		p.DownloadHosts = d.DownloadHosts
	}
	if p.BaseURL == "" {
		p.BaseURL = d.BaseURL
	}
	p.AtlassianSites = p.AtlassianSites || d.AtlassianSites
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
		if p.OAuth.AuthParams == nil {
			p.OAuth.AuthParams = d.OAuth.AuthParams
		}
	}
	return p
}

// checkFileServer checks what only file server connections carry: an SFTP
// connection pins its server's host key (there is no trust on first use:
// the user gives the fingerprint), a key is SFTP's only and must parse.
func checkFileServer(n NewToken, base string) error {
	u, _ := url.Parse(base)
	sftp := u != nil && u.Scheme == "sftp"
	if n.Provider != ProviderFiles {
		if n.HostKey != "" || n.PrivateKey != "" {
			return fmt.Errorf("%w: a host key or private key belongs to an SFTP connection", tenancy.ErrInvalid)
		}
		return nil
	}
	if base == "" {
		return fmt.Errorf("%w: a file server connection needs its URL (ftp://, ftps:// or sftp://host:port/base-directory)", tenancy.ErrInvalid)
	}
	if n.Auth != AuthBasic {
		return fmt.Errorf("%w: a file server connection authenticates by %q (account and password or key)", tenancy.ErrInvalid, AuthBasic)
	}
	if !sftp {
		if n.HostKey != "" || n.PrivateKey != "" {
			return fmt.Errorf("%w: a host key or private key belongs to an SFTP connection, not %s", tenancy.ErrInvalid, u.Scheme)
		}
		if strings.TrimSpace(n.Token) == "" {
			return fmt.Errorf("%w: an FTP connection needs the password", tenancy.ErrInvalid)
		}
		return nil
	}
	fp, ok := strings.CutPrefix(n.HostKey, "SHA256:")
	if raw, err := base64.RawStdEncoding.DecodeString(fp); !ok || err != nil || len(raw) != 32 {
		return fmt.Errorf("%w: an SFTP connection pins its server's host key: hostKey is its SHA256 fingerprint as `ssh-keyscan HOST | ssh-keygen -lf -` prints it (SHA256:...)", tenancy.ErrInvalid)
	}
	if n.PrivateKey != "" {
		if _, err := ssh.ParsePrivateKey([]byte(n.PrivateKey)); err != nil {
			return fmt.Errorf("%w: the private key does not parse (PEM, without a passphrase): %v", tenancy.ErrInvalid, err)
		}
	}
	return nil
}

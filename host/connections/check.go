package connections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/connections/connrecord"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/tenancy"
)

// CheckOptions are how the service tries a connection (Check).
type CheckOptions struct {
	// Off: connections are not tried when made (plugin tests, whose
	// fixtures name made-up sites that must not be sent requests).
	Off bool
	// AllowPrivateHosts and Resolver are the operator's egress settings
	// (as for connectors): a check goes only to the connection's own
	// hosts, through the same egress rules as a connector's request.
	AllowPrivateHosts []string
	Resolver          egress.Resolver
	// Timeout bounds one check (default 15 s): a site that does not
	// answer fails the check, it does not hold the user's request.
	Timeout time.Duration
	// Login tries a file server connection (the host speaks FTP and SFTP
	// itself, host/filetransfer); nil leaves those unchecked.
	Login func(ctx context.Context, l Login) error
}

// Check tries p's connection id against its provider (a request that
// needs nothing but the credential: Jira's myself, Graph's me, Drive's
// about) and records when and what went wrong; the connection answered
// carries the outcome in Status and LastError. A revoked connection is not
// tried. The error is the store's or the connection's lookup's only: a
// failed check is an answer, not an error.
func (s *Service) Check(ctx context.Context, p tenancy.Principal, id string) (Connection, error) {
	rec, err := s.o.Store.Connection(ctx, p, id)
	if err != nil {
		return Connection{}, err
	}
	if rec.Revoked() || s.o.Check.Off {
		return s.view(rec), nil
	}
	tried, cerr := s.try(ctx, p, rec)
	if !tried {
		return s.view(rec), nil
	}
	msg := ""
	if cerr != nil {
		msg = cerr.Error()
	}
	at := s.o.Now().UTC()
	if err := s.o.Store.SetConnectionCheck(ctx, p, id, at, msg); err != nil {
		return Connection{}, err
	}
	rec, err = s.o.Store.Connection(ctx, p, id)
	if err != nil {
		return Connection{}, err
	}
	return s.view(rec), nil
}

// try sends the provider's check request; tried is false when the
// provider has none.
func (s *Service) try(ctx context.Context, p tenancy.Principal, rec connrecord.ConnectionRecord) (tried bool, err error) {
	timeout := s.o.Check.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if rec.Provider == ProviderFiles {
		if s.o.Check.Login == nil {
			return false, nil
		}
		l, err := s.Login(ctx, p, rec.ID, rec.Provider)
		if err != nil {
			return true, err
		}
		return true, s.o.Check.Login(ctx, l)
	}
	u := s.checkURL(rec)
	if u == "" {
		return false, nil
	}
	hosts := s.ownHosts(rec)
	resp, err := s.Do(ctx, p, rec.ID, rec.Provider, hosts, egress.Request{Method: http.MethodGet, URL: u,
		Headers: map[string]string{"Accept": "application/json"}}, s.checkClient(hosts, timeout).Do)
	if err != nil {
		return true, err
	}
	if resp.Status/100 != 2 {
		return true, fmt.Errorf("%s answered HTTP %d to %s", hostOf(u), resp.Status, pathOf(u))
	}
	return true, nil
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Host
	}
	return u
}

func pathOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Path
	}
	return u
}

// checkClient reaches the connection's own hosts only, to read.
func (s *Service) checkClient(hosts []string, timeout time.Duration) *egress.Client {
	pol := egress.NewPolicy().WithAllowedHosts(hosts...).WithMethods(http.MethodGet, http.MethodHead).
		WithMaxResponseBytes(1 << 20).WithTimeout(timeout).WithPrivateHostsAllowed(s.o.Check.AllowPrivateHosts...)
	if s.o.Check.Resolver != nil {
		pol = pol.WithResolver(s.o.Check.Resolver)
	}
	return egress.NewClient(pol)
}

// checkURL is the request that tries rec: the provider's CheckPath under
// the connection's base URL, or the known providers' own.
func (s *Service) checkURL(rec connrecord.ConnectionRecord) string {
	base := strings.TrimSuffix(s.baseURL(rec), "/")
	if base == "" {
		return ""
	}
	path := s.providers[rec.Provider].CheckPath
	if path == "" {
		switch rec.Provider {
		case "jira":
			// The current user (Atlassian REST v3 "Get current user"; Data
			// Center and Server have REST v2 only).
			path = "/rest/api/3/myself"
			if rec.Deployment == DeploymentDataCenter || (rec.Deployment == "" && !jiraCloud(base)) {
				path = "/rest/api/2/myself"
			}
		case "microsoft":
			path = "/me" // Graph: the signed-in user (User.Read)
		case "google":
			path = "/drive/v3/about?fields=user" // Drive: the user (any Drive scope)
		default:
			return ""
		}
	}
	return base + path
}

// jiraCloud tells Jira Cloud's URLs (a site on atlassian.net, or the API
// gateway api.atlassian.com/ex/jira/{cloudId}) from a Data Center or Server
// site's.
func jiraCloud(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return strings.HasSuffix(h, ".atlassian.net") || h == "api.atlassian.com"
}

// atlassianResource is one site an Atlassian OAuth 2.0 (3LO) grant reaches
// (GET /oauth/token/accessible-resources, Atlassian's "OAuth 2.0 (3LO) apps").
type atlassianResource struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// jiraSite finds the cloud id of the Jira site a new 3LO grant reaches and
// answers its API root on the gateway (root/ex/jira/{cloudId}): Atlassian
// requests go there, not to the site's URL. With several sites, the one
// named like the connection's label (its name, or its URL's host) is
// taken; otherwise the first, as Atlassian lists them.
func (s *Service) jiraSite(ctx context.Context, root, accessToken, label string) (string, error) {
	u, err := url.Parse(root)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("connections: jira's API root %q is not a URL", root)
	}
	hosts := []string{u.Host}
	timeout := s.o.Check.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := s.checkClient(hosts, timeout).Do(ctx, egress.Request{Method: http.MethodGet, URL: strings.TrimSuffix(root, "/") + "/oauth/token/accessible-resources",
		Headers: map[string]string{"Authorization": "Bearer " + accessToken, "Accept": "application/json"}})
	if err != nil {
		return "", fmt.Errorf("connections: looking up the Jira sites of the grant: %w", scrubError(err, connrecord.ConnectionRecord{Auth: AuthOAuth2}, secret{AccessToken: accessToken}))
	}
	if resp.Status != http.StatusOK {
		return "", fmt.Errorf("connections: accessible-resources answered HTTP %d", resp.Status)
	}
	var sites []atlassianResource
	if err := json.Unmarshal(resp.Body, &sites); err != nil {
		return "", fmt.Errorf("connections: accessible-resources answered something that is not its list: %w", err)
	}
	var pick *atlassianResource
	for i, r := range sites {
		if r.ID == "" || strings.ContainsAny(r.ID, "/?#") {
			continue
		}
		host := r.URL
		if su, err := url.Parse(r.URL); err == nil {
			host = su.Hostname()
		}
		if pick == nil || strings.EqualFold(r.Name, label) || strings.EqualFold(host, label) {
			pick = &sites[i]
		}
	}
	if pick == nil {
		return "", errors.New("connections: the grant reaches no Jira site (accessible-resources is empty)")
	}
	return strings.TrimSuffix(root, "/") + "/ex/jira/" + url.PathEscape(pick.ID), nil
}

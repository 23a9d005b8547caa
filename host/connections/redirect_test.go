package connections_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/redirector"
	"github.com/agenthost/agenthost/host/egress"
)

// redirectNames are the names the hostile provider is reached as, all on
// loopback: a Jira site, its subdomain and another site; a Graph-like
// provider's API, a subdomain of it, its download host and another host of
// its domain; a host no connector names.
var redirectNames = []string{"acme.atlassian.net", "x.acme.atlassian.net", "evil.atlassian.net",
	"api.drive.test", "x.api.drive.test", "eu.dl.drive.test", "other.drive.test", "other.test"}

// TestRedirectHops: a provider's redirects are followed only as the
// connection allows. The credential goes to the connection's own host
// (302, 303, and 307 and 308 with their body); a subdomain of it, another
// site the connector may reach, or a host outside the connector is
// refused before anything is sent there, the error naming the hop; the
// provider's download host is reached without the credential, to read
// only, and the credential does not come back after it.
func TestRedirectHops(t *testing.T) {
	ctx := context.Background()
	us := connectionstest.NewUsers(t)
	srv := redirector.New()
	t.Cleanup(srv.Close)
	port := srv.Port()
	svc, err := connections.New(connections.Options{Check: connections.CheckOptions{Resolver: connectionstest.DNS{}}, Store: us.DB, Sealer: connectionstest.Sealer(t), Providers: []connections.Provider{
		{Name: "jira"},
		{Name: "drive", Hosts: []string{"api.drive.test"}, DownloadHosts: []string{"*.dl.drive.test"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	u := func(host, path string) string { return "http://" + host + ":" + port + path }
	jira, err := svc.AddToken(ctx, us.Alice, connections.NewToken{Provider: "jira", Label: "acme", Auth: "basic", BaseURL: u("acme.atlassian.net", ""),
		Account: "alice@acme.example", Token: "jira-api-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	drive, err := svc.AddToken(ctx, us.Alice, connections.NewToken{Provider: "drive", Label: "files", Auth: "token", Token: "drive-token-1"})
	if err != nil {
		t.Fatal(err)
	}
	creds := map[string]string{jira.ID: "Basic " + basic("alice@acme.example", "jira-api-token-1"), drive.ID: "Bearer drive-token-1"}
	dns := connectionstest.DNS{}
	var private []string
	for _, n := range redirectNames {
		dns[n] = "127.0.0.1"
		private = append(private, n+":"+port)
	}
	// The connectors' egress clients: Jira's reaches every Atlassian
	// site, the drive connector all of its domain.
	send := func(hosts ...string) connections.Sender {
		return egress.NewClient(egress.NewPolicy().WithAllowedHosts(hosts...).WithPrivateHostsAllowed(private...).WithResolver(dns)).Do
	}
	jiraHosts, driveHosts := []string{"*.atlassian.net"}, []string{"api.drive.test", "*.drive.test"}

	// got is a request the provider should see: cred whether it carried
	// the connection's credential (and nothing else may be in Authorization).
	type got struct {
		host, method, path string
		cred               bool
		body               string
	}
	const body = "the user's upload"
	cases := []struct {
		name         string
		conn         string
		hosts        []string
		method, url  string
		body         string
		want         error  // nil: success
		refused      string // the host the error names
		seen         []got
		answeredFrom string // success: the host the answer came from
	}{
		{name: "302 to a subdomain of the connection's site", conn: jira.ID, hosts: jiraHosts,
			url:  u("acme.atlassian.net", redirector.To(u("x.acme.atlassian.net", "/rest/api/3/myself"), 302)),
			want: connections.ErrHostRefused, refused: "x.acme.atlassian.net",
			seen: []got{{"acme.atlassian.net", "GET", "/to", true, ""}}},
		{name: "302 to another site the connector reaches", conn: jira.ID, hosts: jiraHosts,
			url:  u("acme.atlassian.net", redirector.To(u("evil.atlassian.net", "/rest/api/3/myself"), 302)),
			want: connections.ErrHostRefused, refused: "evil.atlassian.net",
			seen: []got{{"acme.atlassian.net", "GET", "/to", true, ""}}},
		{name: "307 with body to a subdomain", conn: jira.ID, hosts: jiraHosts, method: "POST", body: body,
			url:  u("acme.atlassian.net", redirector.To(u("x.acme.atlassian.net", "/upload"), 307)),
			want: connections.ErrHostRefused, refused: "x.acme.atlassian.net",
			seen: []got{{"acme.atlassian.net", "POST", "/to", true, body}}},
		{name: "308 with body to another site", conn: jira.ID, hosts: jiraHosts, method: "PUT", body: body,
			url:  u("acme.atlassian.net", redirector.To(u("evil.atlassian.net", "/upload"), 308)),
			want: connections.ErrHostRefused, refused: "evil.atlassian.net",
			seen: []got{{"acme.atlassian.net", "PUT", "/to", true, body}}},
		{name: "302 outside the connector's hosts", conn: jira.ID, hosts: jiraHosts,
			url:  u("acme.atlassian.net", redirector.To(u("other.test", "/"), 302)),
			want: egress.ErrHostNotAllowed, refused: "other.test",
			seen: []got{{"acme.atlassian.net", "GET", "/to", true, ""}}},
		{name: "two hops on the site, then a subdomain", conn: jira.ID, hosts: jiraHosts,
			url:  u("acme.atlassian.net", redirector.To(u("acme.atlassian.net", redirector.To(u("x.acme.atlassian.net", "/"), 301)), 302)),
			want: connections.ErrHostRefused, refused: "x.acme.atlassian.net",
			seen: []got{{"acme.atlassian.net", "GET", "/to", true, ""}, {"acme.atlassian.net", "GET", "/to", true, ""}}},
		{name: "302 on the connection's site", conn: jira.ID, hosts: jiraHosts,
			url:  u("acme.atlassian.net", redirector.To(u("acme.atlassian.net", "/rest/api/3/myself"), 302)),
			seen: []got{{"acme.atlassian.net", "GET", "/to", true, ""}, {"acme.atlassian.net", "GET", "/rest/api/3/myself", true, ""}}, answeredFrom: "acme.atlassian.net"},
		{name: "307 with body on the connection's site", conn: jira.ID, hosts: jiraHosts, method: "POST", body: body,
			url:  u("acme.atlassian.net", redirector.To(u("acme.atlassian.net", "/upload"), 307)),
			seen: []got{{"acme.atlassian.net", "POST", "/to", true, body}, {"acme.atlassian.net", "POST", "/upload", true, body}}, answeredFrom: "acme.atlassian.net"},
		{name: "308 with body on the connection's site", conn: jira.ID, hosts: jiraHosts, method: "PUT", body: body,
			url:  u("acme.atlassian.net", redirector.To(u("acme.atlassian.net", "/upload"), 308)),
			seen: []got{{"acme.atlassian.net", "PUT", "/to", true, body}, {"acme.atlassian.net", "PUT", "/upload", true, body}}, answeredFrom: "acme.atlassian.net"},
		{name: "303 after a POST on the connection's site", conn: jira.ID, hosts: jiraHosts, method: "POST", body: body,
			url:  u("acme.atlassian.net", redirector.To(u("acme.atlassian.net", "/done"), 303)),
			seen: []got{{"acme.atlassian.net", "POST", "/to", true, body}, {"acme.atlassian.net", "GET", "/done", true, ""}}, answeredFrom: "acme.atlassian.net"},
		{name: "302 to the provider's download host", conn: drive.ID, hosts: driveHosts,
			url:  u("api.drive.test", redirector.To(u("eu.dl.drive.test", "/file?tempauth=x"), 302)),
			seen: []got{{"api.drive.test", "GET", "/to", true, ""}, {"eu.dl.drive.test", "GET", "/file", false, ""}}, answeredFrom: "eu.dl.drive.test"},
		{name: "the download host redirects back: no credential after it", conn: drive.ID, hosts: driveHosts,
			url:          u("api.drive.test", redirector.To(u("eu.dl.drive.test", redirector.To(u("api.drive.test", "/again"), 302)), 302)),
			seen:         []got{{"api.drive.test", "GET", "/to", true, ""}, {"eu.dl.drive.test", "GET", "/to", false, ""}, {"api.drive.test", "GET", "/again", false, ""}},
			answeredFrom: "api.drive.test"},
		{name: "307 with body to the download host", conn: drive.ID, hosts: driveHosts, method: "POST", body: body,
			url:  u("api.drive.test", redirector.To(u("eu.dl.drive.test", "/file"), 307)),
			want: connections.ErrHostRefused, refused: "eu.dl.drive.test",
			seen: []got{{"api.drive.test", "POST", "/to", true, body}}},
		{name: "302 to a subdomain of the provider's host", conn: drive.ID, hosts: driveHosts,
			url:  u("api.drive.test", redirector.To(u("x.api.drive.test", "/"), 302)),
			want: connections.ErrHostRefused, refused: "x.api.drive.test",
			seen: []got{{"api.drive.test", "GET", "/to", true, ""}}},
		{name: "302 to a host the connector reaches, not the connection", conn: drive.ID, hosts: driveHosts,
			url:  u("api.drive.test", redirector.To(u("other.drive.test", "/"), 302)),
			want: connections.ErrHostRefused, refused: "other.drive.test",
			seen: []got{{"api.drive.test", "GET", "/to", true, ""}}},
		{name: "the download host asked directly", conn: drive.ID, hosts: driveHosts,
			url:  u("eu.dl.drive.test", "/file"),
			want: connections.ErrHostRefused, refused: "eu.dl.drive.test"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(srv.Requests())
			r := egress.Request{Method: tc.method, URL: tc.url, Headers: map[string]string{"Content-Type": "text/plain"}}
			if tc.body != "" {
				r.Body = []byte(tc.body)
			}
			resp, err := svc.Do(ctx, us.Alice, tc.conn, map[string]string{jira.ID: "jira", drive.ID: "drive"}[tc.conn], tc.hosts, r, send(tc.hosts...))
			var seen []got
			for _, q := range srv.Requests()[before:] {
				g := got{host: q.Host, method: q.Method, path: q.Path, cred: q.Authorization == creds[tc.conn], body: q.Body}
				if q.Authorization != "" && !g.cred {
					t.Errorf("%s %s%s got Authorization %q", q.Method, q.Host, q.Path, q.Authorization)
				}
				seen = append(seen, g)
			}
			if !slices.Equal(seen, tc.seen) {
				t.Errorf("the provider saw\n%+v\nwant\n%+v", seen, tc.seen)
			}
			if tc.want != nil {
				if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("error %v, want %v naming %s", err, tc.want, tc.refused)
				}
				return
			}
			if err != nil || resp.Status != http.StatusOK || !strings.Contains(resp.URL, tc.answeredFrom+":") {
				t.Fatalf("%+v %v, want 200 from %s", resp, err, tc.answeredFrom)
			}
		})
	}
}

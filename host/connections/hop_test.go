package connections

import (
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/agenthost/agenthost/host/connections/connrecord"
	"github.com/agenthost/agenthost/host/egress"
)

// TestHop: the decision on one redirect hop, as a table, including what a
// loopback test server cannot show: a fall from https to http.
func TestHop(t *testing.T) {
	s := &Service{providers: map[string]Provider{
		"jira":      {Name: "jira"},
		"microsoft": {Name: "microsoft", Hosts: []string{"graph.microsoft.com"}, BaseURL: "https://graph.microsoft.com/v1.0", DownloadHosts: []string{"*.sharepoint.com"}},
	}}
	jira := connrecord.ConnectionRecord{Provider: "jira", Label: "acme", BaseURL: "https://acme.atlassian.net"}
	ms := connrecord.ConnectionRecord{Provider: "microsoft", Label: "work"}
	jiraHosts, msHosts := []string{"*.atlassian.net"}, []string{"graph.microsoft.com", "*.sharepoint.com"}
	cases := []struct {
		name       string
		rec        connrecord.ConnectionRecord
		hosts      []string
		first, to  string
		method     string
		left       bool
		credential bool
		refused    bool
		leftAfter  bool
	}{
		{"same site", jira, jiraHosts, "https://acme.atlassian.net/a", "https://acme.atlassian.net/b", "GET", false, true, false, false},
		{"same site, another port", jira, jiraHosts, "https://acme.atlassian.net/a", "https://acme.atlassian.net:8443/b", "GET", false, true, false, false},
		{"https to http on the site", jira, jiraHosts, "https://acme.atlassian.net/a", "http://acme.atlassian.net/b", "GET", false, false, true, false},
		{"subdomain", jira, jiraHosts, "https://acme.atlassian.net/a", "https://x.acme.atlassian.net/b", "GET", false, false, true, false},
		{"another site", jira, jiraHosts, "https://acme.atlassian.net/a", "https://evil.atlassian.net/b", "GET", false, false, true, false},
		{"outside the connector", jira, jiraHosts, "https://acme.atlassian.net/a", "https://example.com/b", "GET", false, false, true, false},
		{"download host", ms, msHosts, "https://graph.microsoft.com/v1.0/x", "https://contoso.sharepoint.com/dl", "GET", false, false, false, true},
		{"download host, HEAD", ms, msHosts, "https://graph.microsoft.com/v1.0/x", "https://contoso.sharepoint.com/dl", "HEAD", false, false, false, true},
		{"download host, a 307 of a PUT", ms, msHosts, "https://graph.microsoft.com/v1.0/x", "https://contoso.sharepoint.com/dl", "PUT", false, false, true, false},
		{"back to Graph after the download host", ms, msHosts, "https://graph.microsoft.com/v1.0/x", "https://graph.microsoft.com/v1.0/y", "GET", true, false, false, true},
		{"download host not the connector's", ms, []string{"graph.microsoft.com"}, "https://graph.microsoft.com/v1.0/x", "https://contoso.sharepoint.com/dl", "GET", false, false, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first, _ := url.Parse(tc.first)
			to, _ := url.Parse(tc.to)
			left := tc.left
			cred, err := s.hop(tc.rec, tc.hosts, egress.Hop{Method: tc.method, URL: to, From: first, First: first, Header: http.Header{}}, &left)
			if cred != tc.credential || (err != nil) != tc.refused || left != tc.leftAfter {
				t.Fatalf("credential %v, error %v, left %v; want %v, refused %v, left %v", cred, err, left, tc.credential, tc.refused, tc.leftAfter)
			}
			if err != nil && !errors.Is(err, ErrHostRefused) {
				t.Fatalf("error %v is not ErrHostRefused", err)
			}
		})
	}
}

// TestMicrosoftPersonalContentHop: a personal OneDrive's /content answers
// 302 to *.microsoftpersonalcontent.com (Graph's "Download the contents of
// a DriveItem": a preauthenticated URL, needing no Authorization header):
// with the provider's default download hosts and the connector's declared
// hosts, the hop is followed without the token; a look-alike is refused.
func TestMicrosoftPersonalContentHop(t *testing.T) {
	p, _ := oauthDefaults("microsoft", "")
	s := &Service{providers: map[string]Provider{"microsoft": p}}
	ms := connrecord.ConnectionRecord{Provider: "microsoft", Label: "personal"}
	hosts := []string{"graph.microsoft.com", "*.sharepoint.com", "*.1drv.com", "*.livefilestore.com", "*.microsoftpersonalcontent.com"}
	first, _ := url.Parse("https://graph.microsoft.com/v1.0/me/drive/items/X/content")
	for _, tc := range []struct {
		to      string
		refused bool
	}{
		{"https://my.microsoftpersonalcontent.com/personal/abc/_layouts/15/download.aspx?tempauth=t", false},
		{"https://microsoftpersonalcontent.com.evil.example/x", true},
	} {
		to, _ := url.Parse(tc.to)
		left := false
		cred, err := s.hop(ms, hosts, egress.Hop{Method: "GET", URL: to, From: first, First: first, Header: http.Header{}}, &left)
		if cred || (err != nil) != tc.refused {
			t.Errorf("%s: credential %v, error %v; want no credential, refused %v", tc.to, cred, err, tc.refused)
		}
	}
}

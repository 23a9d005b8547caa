package egress_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/egress"
)

func TestParseOverride(t *testing.T) {
	cases := []struct {
		in, name, addr, err string
	}{
		{in: "acme.atlassian.net=127.0.0.1", name: "acme.atlassian.net", addr: "127.0.0.1"},
		{in: " ACME.Atlassian.NET.=10.0.0.7 ", name: "acme.atlassian.net", addr: "10.0.0.7"},
		{in: "graph.microsoft.com=::1", name: "graph.microsoft.com", addr: "::1"},
		{in: "graph.microsoft.com=[::1]", name: "graph.microsoft.com", addr: "::1"},
		{in: "v4mapped.test=::ffff:127.0.0.1", name: "v4mapped.test", addr: "127.0.0.1"},
		{in: "acme.atlassian.net", err: "want NAME=ADDR"},
		{in: "=127.0.0.1", err: "NAME must be a host name"},
		{in: "acme.atlassian.net:443=127.0.0.1", err: "NAME must be a host name"},
		{in: "*.atlassian.net=127.0.0.1", err: "NAME must be a host name"},
		{in: "127.0.0.2=127.0.0.1", err: "NAME is an address"},
		{in: "acme.atlassian.net=localhost", err: "ADDR must be an IP address"},
		{in: "acme.atlassian.net=127.0.0.1:8080", err: "ADDR must be an IP address"},
		{in: "acme.atlassian.net=", err: "ADDR must be an IP address"},
		{in: "acme.atlassian.net=fe80::1%eth0", err: "zone"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			name, a, err := egress.ParseOverride(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q %v %v, want an error with %q", name, a, err, tc.err)
				}
				return
			}
			if err != nil || name != tc.name || a.String() != tc.addr {
				t.Fatalf("got %q %v %v, want %q %s", name, a, err, tc.name, tc.addr)
			}
		})
	}
	if o, err := egress.NewOverrides(nil); o != nil || err != nil {
		t.Fatalf("no entries: %v %v, want nil (the default resolver stays)", o, err)
	}
	if _, err := egress.NewOverrides(nil, "ok.test=127.0.0.1", "bad"); err == nil {
		t.Fatal("a bad entry among good ones was accepted")
	}
}

// asked records the names a resolver was asked for.
type asked struct {
	mu    sync.Mutex
	names []string
	dns   fakeDNS
}

func (a *asked) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	a.mu.Lock()
	a.names = append(a.names, host)
	a.mu.Unlock()
	return a.dns.LookupIPAddr(ctx, host)
}

// TestOverrides: an overridden name answers its addresses without asking
// DNS; every other name goes to the next resolver as before.
func TestOverrides(t *testing.T) {
	next := &asked{dns: fakeDNS{"other.test": "192.0.2.9"}}
	o, err := egress.NewOverrides(next, "acme.atlassian.net=127.0.0.1", "acme.atlassian.net=::1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := o.LookupIPAddr(context.Background(), "ACME.atlassian.net.")
	if err != nil || len(got) != 2 || got[0].IP.String() != "127.0.0.1" || got[1].IP.String() != "::1" {
		t.Fatalf("overridden: %v %v", got, err)
	}
	if len(next.names) != 0 {
		t.Fatalf("an overridden name was asked of DNS: %v", next.names)
	}
	got, err = o.LookupIPAddr(context.Background(), "other.test")
	if err != nil || len(got) != 1 || got[0].IP.String() != "192.0.2.9" {
		t.Fatalf("other name: %v %v", got, err)
	}
	if _, err := o.LookupIPAddr(context.Background(), "evil.atlassian.net"); err == nil || !strings.Contains(err.Error(), "no such host") {
		t.Fatalf("unknown name: %v, want the next resolver's error", err)
	}
	if strings.Join(next.names, ",") != "other.test,evil.atlassian.net" {
		t.Fatalf("next resolver asked %v", next.names)
	}
}

// TestOverridesKeepTheRules: pointing a name at loopback changes where it
// goes, not what is allowed. The allow-list still matches the name, and the
// loopback address is refused until the host is allowed by name.
func TestOverridesKeepTheRules(t *testing.T) {
	_, port := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello from "+r.Host) })
	o, err := egress.NewOverrides(fakeDNS{}, "acme.atlassian.net=127.0.0.1", "evil.test=127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	pol := egress.NewPolicy().WithResolver(o).WithAllowedHosts("*.atlassian.net")
	u := "http://acme.atlassian.net:" + port + "/x"
	ctx := context.Background()

	_, err = egress.NewClient(pol).Do(ctx, egress.Request{Method: "GET", URL: u})
	if !errors.Is(err, egress.ErrAddressBlocked) {
		t.Fatalf("override to loopback without -allow-host: %v, want the address refused", err)
	}
	_, err = egress.NewClient(pol.WithPrivateHostsAllowed("acme.atlassian.net:"+port)).
		Do(ctx, egress.Request{Method: "GET", URL: "http://evil.test:" + port + "/x"})
	if !errors.Is(err, egress.ErrHostNotAllowed) {
		t.Fatalf("overridden name outside the allow-list: %v", err)
	}
	resp, err := egress.NewClient(pol.WithPrivateHostsAllowed("acme.atlassian.net:"+port)).Do(ctx, egress.Request{Method: "GET", URL: u})
	if err != nil {
		t.Fatalf("allowed: %v", err)
	}
	if string(resp.Body) != "hello from acme.atlassian.net:"+port {
		t.Fatalf("allowed: %q", resp.Body)
	}
}

package egress_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/egress"
)

// fakeDNS resolves test names; everything else fails (tests never leave 127/8).
type fakeDNS map[string]string

func (f fakeDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if ip, ok := f[host]; ok {
		return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

// server starts an httptest server and returns it with its port.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, string) {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	return s, u.Port()
}

func TestClient(t *testing.T) {
	_, port := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			fmt.Fprint(w, "hello "+r.Method)
		case "/big":
			w.Write([]byte(strings.Repeat("x", 2048)))
		case "/to-forbidden":
			http.Redirect(w, r, "http://evil.test:"+r.URL.Port()+"/ok", http.StatusFound)
		case "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:"+portOf(r)+"/ok", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-allowed":
			http.Redirect(w, r, "http://api.example.test:"+portOf(r)+"/ok", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	})
	dns := fakeDNS{"api.example.test": "127.0.0.1", "www.example.test": "127.0.0.1", "evil.test": "127.0.0.1", "sneaky.example.test": "127.0.0.1"}
	base := egress.NewPolicy().
		WithResolver(dns).
		WithAllowedHosts("api.example.test", "*.example.test").
		WithPrivateHostsAllowed("api.example.test", "www.example.test").
		WithMaxResponseBytes(1024)
	u := func(host, p string) string { return "http://" + host + ":" + port + p }

	cases := []struct {
		name    string
		pol     egress.Policy
		method  string
		url     string
		want    error  // nil: success
		inError string // must appear in the message
		body    string
	}{
		{"allowed host", base, "GET", u("api.example.test", "/ok"), nil, "", "hello GET"},
		{"glob allowed", base, "GET", u("www.example.test", "/ok"), nil, "", "hello GET"},
		{"host not in allow-list", base, "GET", u("evil.test", "/ok"), egress.ErrHostNotAllowed, "evil.test", ""},
		{"allowed name resolving to loopback without permission", base, "GET", u("sneaky.example.test", "/ok"), egress.ErrAddressBlocked, "sneaky.example.test", ""},
		{"redirect to forbidden host", base, "GET", u("api.example.test", "/to-forbidden"), egress.ErrHostNotAllowed, "evil.test", ""},
		{"redirect to 127.0.0.1", base.WithAllowedHosts("api.example.test", "127.0.0.1"), "GET", u("api.example.test", "/to-loopback"), egress.ErrAddressBlocked, "127.0.0.1", ""},
		{"redirect to metadata", base.WithAllowedHosts("api.example.test", "169.254.169.254"), "GET", u("api.example.test", "/to-metadata"), egress.ErrAddressBlocked, "169.254.169.254", ""},
		{"redirect within allow-list", base, "GET", u("www.example.test", "/to-allowed"), nil, "", "hello GET"},
		{"POST refused for read-only", base.WithMethods("GET", "HEAD"), "POST", u("api.example.test", "/ok"), egress.ErrMethodNotAllowed, "POST", ""},
		{"POST allowed for writers", base, "POST", u("api.example.test", "/ok"), nil, "", "hello POST"},
		{"response cap", base, "GET", u("api.example.test", "/big"), egress.ErrResponseTooLarge, "1024", ""},
		{"redirect loop", base, "GET", u("api.example.test", "/loop"), egress.ErrTooManyRedirects, "redirects", ""},
		{"file scheme", base, "GET", "file:///etc/passwd", egress.ErrSchemeNotAllowed, "file", ""},
		{"metadata name", base.WithAllowedHosts("metadata.google.internal"), "GET", "http://metadata.google.internal/", egress.ErrAddressBlocked, "metadata", ""},
		{"empty allow-list", egress.NewPolicy().WithResolver(dns), "GET", u("api.example.test", "/ok"), egress.ErrHostNotAllowed, "api.example.test", ""},
		{"port pinned by allow-list", base.WithAllowedHosts("api.example.test:1"), "GET", u("api.example.test", "/ok"), egress.ErrHostNotAllowed, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := egress.NewClient(tc.pol).Do(context.Background(), egress.Request{Method: tc.method, URL: tc.url})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Do: %v", err)
				}
				if string(resp.Body) != tc.body {
					t.Fatalf("body %q, want %q", resp.Body, tc.body)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Do = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.inError) {
				t.Fatalf("error %q does not name %q", err, tc.inError)
			}
		})
	}
}

func portOf(r *http.Request) string {
	_, p, _ := net.SplitHostPort(r.Host)
	return p
}

func TestBlockedAddresses(t *testing.T) {
	dns := fakeDNS{}
	for _, ip := range []string{"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "64:ff9b::a01:203"} {
		dns["h"+strings.NewReplacer(".", "-", ":", "-").Replace(ip)+".test"] = ip
	}
	pol := egress.NewPolicy().WithResolver(dns).WithAllowedHosts("*.test")
	for name, ip := range dns {
		t.Run(ip, func(t *testing.T) {
			_, err := egress.NewClient(pol).Do(context.Background(), egress.Request{URL: "http://" + name + "/"})
			if !errors.Is(err, egress.ErrAddressBlocked) {
				t.Fatalf("%s (%s): %v, want ErrAddressBlocked", name, ip, err)
			}
		})
	}
}

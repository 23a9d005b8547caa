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
	"sync"
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
		WithPrivateHostsAllowed("api.example.test:"+port, "www.example.test:"+port).
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
		{"allow-list entry with the port", base.WithAllowedHosts("api.example.test:" + port), "GET", u("api.example.test", "/ok"), nil, "", "hello GET"},
		{"private host allowed on another port only", base.WithPrivateHostsAllowed("evil.test:1").WithAllowedHosts("evil.test"), "GET", u("evil.test", "/ok"), egress.ErrAddressBlocked, "other ports than " + port, ""},
		{"bare private host: ports 80 and 443 only", base.WithPrivateHostsAllowed("evil.test").WithAllowedHosts("evil.test"), "GET", u("evil.test", "/ok"), egress.ErrAddressBlocked, "other ports than " + port, ""},
		{"private host with its port", base.WithPrivateHostsAllowed("evil.test:" + port).WithAllowedHosts("evil.test"), "GET", u("evil.test", "/ok"), nil, "", "hello GET"},
		{"invalid allow-list entry matches nothing", base.WithAllowedHosts("api.example.test:http"), "GET", u("api.example.test", "/ok"), egress.ErrHostNotAllowed, "", ""},
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
	for _, ip := range []string{"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "64:ff9b::a01:203",
		"::127.0.0.1", "::ffff:0:127.0.0.1", "2002:7f00:1::1", "2002:a9fe:a9fe::1", "2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:0:a00:1::1",
		"fec0::1", "2001:db8::1", "64:ff9b:1::1", "::8.8.8.8"} {
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

// TestEmbeddedIPv4 sends requests to a real server on 127.0.0.1 through IPv6
// forms that carry a loopback, private or metadata IPv4 address. Each must be
// refused by the policy (naming the IPv4 address) before any connection, so
// the server sees none of them; the control shows that the server is reached
// when the operator allows the form by name and port.
func TestEmbeddedIPv4(t *testing.T) {
	var mu sync.Mutex
	var hits []string
	_, port := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.Host)
		mu.Unlock()
		fmt.Fprint(w, "reached")
	})
	cases := []struct {
		name, host string // host: an IPv6 literal or a name the fake DNS resolves
		dns        string
		inError    string
	}{
		{"IPv4-compatible loopback", "[::127.0.0.1]", "", "loopback address 127.0.0.1 embedded in a IPv4-compatible"},
		{"IPv4-compatible loopback, hex form", "[::7f00:1]", "", "127.0.0.1"},
		{"IPv4-mapped loopback", "[::ffff:127.0.0.1]", "", "loopback address"},
		{"IPv4-translated loopback", "[::ffff:0:127.0.0.1]", "", "loopback address 127.0.0.1 embedded in a IPv4-translated"},
		{"NAT64 loopback", "[64:ff9b::127.0.0.1]", "", "loopback address 127.0.0.1 embedded in a NAT64"},
		{"NAT64 private", "[64:ff9b::10.0.0.1]", "", "private address 10.0.0.1 embedded in a NAT64"},
		{"NAT64 metadata", "[64:ff9b::169.254.169.254]", "", "cloud metadata address 169.254.169.254 embedded"},
		{"NAT64 with a zone", "[64:ff9b::7f00:1%25lo]", "", "127.0.0.1 embedded in a NAT64"},
		{"6to4 loopback", "[2002:7f00:1::1]", "", "loopback address 127.0.0.1 embedded in a 6to4"},
		{"6to4 private", "[2002:c0a8:101::1]", "", "private address 192.168.1.1 embedded in a 6to4"},
		{"Teredo client loopback", "[2001:0:4136:e378:8000:63bf:80ff:fffe]", "", "loopback address 127.0.0.1 embedded in a Teredo (client)"},
		{"Teredo server private", "[2001:0:a00:1:8000:63bf:f7f7:f7f7]", "", "private address 10.0.0.1 embedded in a Teredo (server)"},
		{"name resolving to IPv4-compatible loopback", "compat.test", "::127.0.0.1", "127.0.0.1 embedded"},
		{"name resolving to NAT64 metadata", "nat64.test", "64:ff9b::a9fe:a9fe", "cloud metadata address 169.254.169.254"},
		{"name resolving to 6to4 private", "sixtofour.test", "2002:ac10:1::", "private address 172.16.0.1"},
	}
	dns := fakeDNS{}
	for _, tc := range cases {
		if tc.dns != "" {
			dns[tc.host] = tc.dns
		}
	}
	pol := egress.NewPolicy().WithResolver(dns).WithAllowedHosts("*")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := egress.NewClient(pol).Do(context.Background(), egress.Request{URL: "http://" + tc.host + ":" + port + "/"})
			if !errors.Is(err, egress.ErrAddressBlocked) || !strings.Contains(err.Error(), tc.inError) {
				t.Fatalf("Do = %v, want ErrAddressBlocked naming %q", err, tc.inError)
			}
		})
	}
	mu.Lock()
	if len(hits) != 0 {
		t.Errorf("refused requests reached the server: %v", hits)
	}
	mu.Unlock()

	// Control: the mapped form does lead to the loopback server, so its
	// refusal above is the policy's and not the operating system's.
	ctl := pol.WithPrivateHostsAllowed("[::ffff:127.0.0.1]:" + port)
	resp, err := egress.NewClient(ctl).Do(context.Background(), egress.Request{URL: "http://[::ffff:127.0.0.1]:" + port + "/"})
	if err != nil || string(resp.Body) != "reached" {
		t.Fatalf("allowed by the operator: %v %v", resp, err)
	}
}

// TestMetadataRefusedForPrivateHosts: an operator's private-host allowance
// does not reach cloud metadata, even when the allowed name resolves there.
func TestMetadataRefusedForPrivateHosts(t *testing.T) {
	pol := egress.NewPolicy().
		WithResolver(fakeDNS{"intranet.test": "169.254.169.254", "intranet6.test": "fd00:ec2::254"}).
		WithAllowedHosts("*.test").
		WithPrivateHostsAllowed("intranet.test", "intranet6.test")
	for _, host := range []string{"intranet.test", "intranet6.test"} {
		_, err := egress.NewClient(pol).Do(context.Background(), egress.Request{URL: "http://" + host + "/"})
		if !errors.Is(err, egress.ErrAddressBlocked) || !strings.Contains(err.Error(), "cloud metadata") {
			t.Errorf("%s: %v, want a refused metadata address", host, err)
		}
	}
}

func TestParseHostEntry(t *testing.T) {
	cases := []struct {
		in, want string // want "": refused
	}{
		{"api.example.org", "api.example.org"},
		{"API.Example.org.", "api.example.org"},
		{"api.example.org:8443", "api.example.org:8443"},
		{"*.example.org:443", "*.example.org:443"},
		{"10.0.0.5:5432", "10.0.0.5:5432"},
		{"[fd00::1]:8080", "[fd00::1]:8080"},
		{"[::127.0.0.1]", "[::7f00:1]"},
		{"fd00::1", "[fd00::1]"},
		{"", ""},
		{"host:", ""},
		{"host:0", ""},
		{"host:65536", ""},
		{"host:http", ""},
		{"host:080", ""},
		{"[fd00::1", ""},
		{"[zz::1]:80", ""},
		{"fe80::1%eth0", ""},
		{"bad_host", ""},
		{"a/b", ""},
	}
	for _, tc := range cases {
		e, err := egress.ParseHostEntry(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseHostEntry(%q) = %v, want an error", tc.in, e)
		case tc.want != "" && (err != nil || e.String() != tc.want):
			t.Errorf("ParseHostEntry(%q) = %v, %v, want %s", tc.in, e, err, tc.want)
		}
	}
}

// TestDial: the raw dialer of other protocols applies the address rules
// alone: a loopback name is refused unless allowed by name on that port,
// then the connection goes to the address checked; metadata names and
// addresses are refused whatever the allowance.
func TestDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dns := fakeDNS{"files.test": "127.0.0.1", "meta.test": "169.254.169.254"}
	ctx := context.Background()
	refused := egress.NewClient(egress.NewPolicy().WithResolver(dns))
	if _, err := refused.Dial(ctx, "tcp", "files.test:"+port); !errors.Is(err, egress.ErrAddressBlocked) {
		t.Fatalf("loopback without an allowance: %v", err)
	}
	otherPort := egress.NewClient(egress.NewPolicy().WithResolver(dns).WithPrivateHostsAllowed("files.test:1"))
	if _, err := otherPort.Dial(ctx, "tcp", "files.test:"+port); !errors.Is(err, egress.ErrAddressBlocked) {
		t.Fatalf("loopback allowed on another port: %v", err)
	}
	allowed := egress.NewClient(egress.NewPolicy().WithResolver(dns).WithPrivateHostsAllowed("files.test:"+port, "meta.test:"+port, "metadata:"+port))
	c, err := allowed.Dial(ctx, "tcp", "files.test:"+port)
	if err != nil {
		t.Fatalf("allowed: %v", err)
	}
	if got := c.RemoteAddr().String(); got != "127.0.0.1:"+port {
		t.Fatalf("dialled %s", got)
	}
	c.Close()
	for _, host := range []string{"meta.test", "metadata"} {
		if _, err := allowed.Dial(ctx, "tcp", host+":"+port); !errors.Is(err, egress.ErrAddressBlocked) {
			t.Errorf("%s: %v", host, err)
		}
	}
}

// TestRedirectDecider: with Request.Redirect, a hop carries no credential
// Go's client would have copied (it copies them to subdomains) unless the
// decider sets it, and the decider's refusal fails the request naming the
// hop, before anything is sent there.
func TestRedirectDecider(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // host → Authorization
	_, port := server(t, func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		mu.Lock()
		seen[host+r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		fmt.Fprint(w, "ok")
	})
	dns := fakeDNS{"api.example.test": "127.0.0.1", "x.api.example.test": "127.0.0.1"}
	pol := egress.NewPolicy().WithResolver(dns).WithAllowedHosts("*.example.test", "api.example.test").
		WithPrivateHostsAllowed("api.example.test:"+port, "x.api.example.test:"+port)
	sub := "http://x.api.example.test:" + port + "/sub"
	start := "http://api.example.test:" + port + "/start?to=" + url.QueryEscape(sub)
	refusal := errors.New("not this one")
	cases := []struct {
		name    string
		decide  func(egress.Hop) error
		want    error
		subAuth string
		subSeen bool
	}{
		{"Go's rule without a decider", nil, nil, "Bearer t", true},
		{"a decider adding nothing", func(egress.Hop) error { return nil }, nil, "", true},
		{"a decider setting its own", func(h egress.Hop) error { h.Header.Set("Authorization", "Bearer hop"); return nil }, nil, "Bearer hop", true},
		{"a decider refusing", func(egress.Hop) error { return refusal }, refusal, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			clear(seen)
			mu.Unlock()
			_, err := egress.NewClient(pol).Do(context.Background(), egress.Request{URL: start, Headers: map[string]string{"Authorization": "Bearer t"}, Redirect: tc.decide})
			if !errors.Is(err, tc.want) || (err != nil && !strings.Contains(err.Error(), "x.api.example.test")) {
				t.Fatalf("Do = %v, want %v naming the hop", err, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			auth, ok := seen["x.api.example.test/sub"]
			if ok != tc.subSeen || auth != tc.subAuth || seen["api.example.test/start"] != "Bearer t" {
				t.Fatalf("seen %q", seen)
			}
		})
	}
}

package main

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestResolveFlag: -resolve entries are checked when given, reach the
// egress options of serve's plugins (and thus the connection capability,
// webSearch and MCP servers, which take the same options), and without the
// flag the system's resolver stays.
func TestResolveFlag(t *testing.T) {
	cases := []struct {
		name string
		args []string
		err  string
		want map[string]string // name -> first address
	}{
		{name: "none", args: nil},
		{name: "one", args: []string{"-resolve", "acme.atlassian.net=127.0.0.1"}, want: map[string]string{"acme.atlassian.net": "127.0.0.1"}},
		{name: "several", args: []string{"-resolve", "acme.atlassian.net=127.0.0.1", "-resolve", "graph.microsoft.com=::1"},
			want: map[string]string{"acme.atlassian.net": "127.0.0.1", "graph.microsoft.com": "::1"}},
		{name: "no address", args: []string{"-resolve", "acme.atlassian.net"}, err: "want NAME=ADDR"},
		{name: "a name as address", args: []string{"-resolve", "acme.atlassian.net=localhost"}, err: "ADDR must be an IP address"},
		{name: "a port", args: []string{"-resolve", "acme.atlassian.net:443=127.0.0.1"}, err: "NAME must be a host name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			pf := addPluginFlags(fs)
			err := fs.Parse(tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parse: %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eo, err := pf.egress()
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if eo.Resolver != nil {
					t.Fatalf("resolver %T without -resolve, want none (the system's)", eo.Resolver)
				}
				return
			}
			// Any other name goes to the system's resolver: an address
			// (never a key of the table) comes back as itself.
			if got, err := eo.Resolver.LookupIPAddr(context.Background(), "192.0.2.7"); err != nil || len(got) != 1 || got[0].IP.String() != "192.0.2.7" {
				t.Fatalf("a name not overridden: %v %v", got, err)
			}
			for name, addr := range tc.want {
				got, err := eo.Resolver.LookupIPAddr(context.Background(), name)
				if err != nil || len(got) == 0 || got[0].IP.String() != addr {
					t.Fatalf("%s resolved to %v %v, want %s", name, got, err, addr)
				}
			}
		})
	}
}

// TestServeRefusesBadResolve: a malformed -resolve stops serve before it
// opens anything.
func TestServeRefusesBadResolve(t *testing.T) {
	_, stderr, err := run0(t, "serve", "-data", t.TempDir(), "-resolve", "acme.atlassian.net=not-an-ip")
	if err == nil || !strings.Contains(stderr+err.Error(), "ADDR must be an IP address") {
		t.Fatalf("serve -resolve bad: %v\n%s", err, stderr)
	}
}

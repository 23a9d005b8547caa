package main

import (
	"flag"
	"strings"

	"github.com/agenthost/agenthost/host/egress"
)

// resolveList is the repeatable -resolve NAME=ADDR flag (curl's --resolve
// without the port): name resolution of plugins' and connectors' HTTP,
// webSearch and MCP servers answers ADDR for NAME. Each entry is checked
// when given, so a typo is an error and not an override that never applies.
type resolveList []string

func (s *resolveList) String() string { return strings.Join(*s, ",") }

func (s *resolveList) Set(v string) error {
	if _, _, err := egress.ParseOverride(v); err != nil {
		return err
	}
	*s = append(*s, v)
	return nil
}

func addResolveFlag(fs *flag.FlagSet) *resolveList {
	r := &resolveList{}
	fs.Var(r, "resolve", settingUsage("resolve", "like curl's --resolve; only the name's address changes: allow-lists still match the name, and a private or loopback ADDR still needs -allow-host"))
	return r
}

// resolver is the egress resolver of the entries: nil (the system's DNS)
// when there are none, else the overrides in front of the system's DNS.
func (s *resolveList) resolver() (egress.Resolver, error) {
	o, err := egress.NewOverrides(nil, *s...)
	if err != nil || o == nil {
		return nil, err
	}
	return o, nil
}

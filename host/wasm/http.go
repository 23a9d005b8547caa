package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/tetratelabs/wazero/api"
)

// EgressOptions are the operator's settings for plugin HTTP.
type EgressOptions struct {
	// AllowPrivateHosts names hosts a plugin may reach even though they resolve
	// to loopback or private addresses (on-premises services, test servers).
	AllowPrivateHosts []string
	// Resolver overrides DNS resolution (tests).
	Resolver egress.Resolver
}

// StandardCapabilities are the capabilities every agenthost host offers:
// egress-checked HTTP and progress reports. Packages add their own (files,
// knowledge, tokens) to the registry next to these.
func StandardCapabilities(o EgressOptions) []Capability {
	return []Capability{HTTPCapability(o), ProgressCapability(), InputCapability(), OutputCapability()}
}

// extismHTTPRequest is the request document of Extism's http_request.
type extismHTTPRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// HTTPCapability links Extism's http_request, http_status_code and http_headers
// to the egress client: the plugin's allow-list is enforced on every hop of a
// redirect, the resolved address is pinned, private and metadata addresses are
// refused unless allowed by name, responses are capped, and read-only tools may
// only GET and HEAD.
func HTTPCapability(o EgressOptions) Capability {
	request := HostFunction{
		Module: ExtismEnv, Name: "http_request",
		Params: []api.ValueType{i64, i64}, Results: []api.ValueType{i64},
		Func: func(ctx context.Context, c *Call, s []uint64) {
			reqJSON, err := c.Read(s[0])
			if err != nil {
				panic(c.Fail(CodeTrap, "http_request: %v", err))
			}
			c.Free(s[0])
			var r extismHTTPRequest
			if err := json.Unmarshal(reqJSON, &r); err != nil {
				panic(c.Fail(CodeHTTPFailed, "http_request: invalid request document: %v", err))
			}
			var body []byte
			if s[1] != 0 {
				if body, err = c.Read(s[1]); err != nil {
					panic(c.Fail(CodeTrap, "http_request: %v", err))
				}
				c.Free(s[1])
			}
			method := strings.ToUpper(r.Method)
			if method == "" {
				method = http.MethodGet
			}
			client := c.p.egressClient(c.ReadOnly, o)
			resp, err := client.Do(ctx, egress.Request{Method: method, URL: r.URL, Headers: r.Headers, Body: body})
			if err != nil {
				code := CodeHTTPFailed
				var denied *egress.DeniedError
				if errors.As(err, &denied) {
					code = CodeHTTPDenied
					if errors.Is(err, egress.ErrHostNotAllowed) {
						panic(c.Fail(code, "plugin %s, tool %s: %v; %s", c.Plugin, c.Tool, err, c.p.hostsHint(denied.Host)))
					}
				}
				panic(c.Fail(code, "plugin %s, tool %s: %v", c.Plugin, c.Tool, err))
			}
			c.httpLast = httpLast{status: resp.Status, headers: resp.Headers}
			off, err := c.Write(resp.Body)
			if err != nil {
				panic(c.Fail(CodeOutOfMemory, "http_request: %v", err))
			}
			s[0] = off
		},
	}
	status := HostFunction{
		Module: ExtismEnv, Name: "http_status_code", Results: []api.ValueType{i32},
		Func: func(_ context.Context, c *Call, s []uint64) { s[0] = uint64(c.httpLast.status) },
	}
	headers := HostFunction{
		Module: ExtismEnv, Name: "http_headers", Results: []api.ValueType{i64},
		Func: func(_ context.Context, c *Call, s []uint64) {
			if c.httpLast.headers == nil {
				s[0] = 0
				return
			}
			flat := make(map[string]string, len(c.httpLast.headers))
			for k, v := range c.httpLast.headers {
				flat[strings.ToLower(k)] = strings.Join(v, ",")
			}
			b, _ := json.Marshal(flat)
			off, err := c.Write(b)
			if err != nil {
				panic(c.Fail(CodeOutOfMemory, "http_headers: %v", err))
			}
			s[0] = off
		},
	}
	return Capability{
		Name:        "http",
		Description: "HTTP requests to the hosts in the plugin's allow-list (read-only tools: GET and HEAD)",
		Functions:   []HostFunction{request, status, headers},
	}
}

// egressClient returns the plugin's client for read-only or writing tools, built
// once per plugin and kind.
func (p *Plugin) egressClient(readOnly bool, o EgressOptions) *egress.Client {
	i := 1
	if readOnly {
		i = 0
	}
	p.egressOnce[i].Do(func() {
		pol := egress.NewPolicy().
			WithAllowedHosts(p.assessment.Hosts...).
			WithMaxResponseBytes(p.limits.maxHTTP).
			WithTimeout(min(p.limits.timeout, 5*time.Minute)).
			WithPrivateHostsAllowed(o.AllowPrivateHosts...)
		if readOnly {
			pol = pol.WithMethods(http.MethodGet, http.MethodHead)
		}
		if o.Resolver != nil {
			pol = pol.WithResolver(o.Resolver)
		}
		p.egress[i] = egress.NewClient(pol)
	})
	return p.egress[i]
}

// hostsHint says, for a host the plugin may not reach, what it may reach and
// which grant would allow the host: the operator's answer, not the author's.
func (p *Plugin) hostsHint(host string) string {
	may := "no host"
	if len(p.assessment.Hosts) > 0 {
		may = strings.Join(p.assessment.Hosts, ", ")
	}
	return fmt.Sprintf("the plugin may reach %s (its manifest's limits.allowedHosts and the operator's grant); "+
		"the operator allows %s with the grants file's plugins.%s.hosts: [%q] (or -grant-host %s=%s)", may, host, p.m.Name, host, p.m.Name, host)
}

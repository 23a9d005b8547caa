package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// The operator's commands for plugins on a running host: they call the API
// (POST, PUT, DELETE /api/v1/plugins), which applies the same checks as a
// start-up and keeps the change across restarts.

// remoteFlags are the server and token of the commands that call the API.
type remoteFlags struct {
	server, token *string
}

// The server is named as `run` names it (-url, AGENTHOST_URL); -server and
// AGENTHOST_SERVER, the names of earlier releases, still work. -server sets
// -url, so that checkSettings sees the flag given and AGENTHOST_URL does not
// replace it.
func addRemoteFlags(fs *flag.FlagSet) remoteFlags {
	def := "http://127.0.0.1:8080"
	if v := os.Getenv("AGENTHOST_SERVER"); v != "" {
		def = v
	}
	server := fs.String("url", def, settingUsage("url"))
	fs.Func("server", "the same as -url (an earlier name)", func(v string) error { return fs.Set("url", v) })
	return remoteFlags{
		server: server,
		token:  fs.String("token", "", settingUsage("token", "here of an admin of a tenant the host names in -plugin-admins")),
	}
}

// do sends one request and decodes the JSON answer into out; a problem
// document becomes an error carrying its title and detail.
func (r remoteFlags) do(ctx context.Context, method, path string, body []byte, out any) error {
	if *r.token == "" {
		return fmt.Errorf("-token is required (or AGENTHOST_TOKEN)")
	}
	u, err := url.Parse(strings.TrimRight(*r.server, "/") + path)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("-url %q: want http(s)://host:port", *r.server)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+*r.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/wasm")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var p remoteProblem
		if json.Unmarshal(raw, &p) == nil && p.Title != "" {
			p.Status = resp.StatusCode
			return &p
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return json.Unmarshal(raw, out)
}

// remoteProblem is the API's problem document; Widenings lists what an
// upgrade refused for widening the plugin would widen.
type remoteProblem struct {
	Status    int      `json:"status"`
	Title     string   `json:"title"`
	Detail    string   `json:"detail"`
	Widenings []string `json:"widenings"`
}

func (p *remoteProblem) Error() string {
	if p.Detail != "" {
		return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail)
	}
	return fmt.Sprintf("%d %s", p.Status, p.Title)
}

// pluginChangeView is the API's answer to a change (api.pluginChange).
type pluginChangeView struct {
	Plugin   *remotePlugin     `json:"plugin"`
	Replaced *remotePlugin     `json:"replaced"`
	Removed  []remotePlugin    `json:"removed"`
	Changes  []manifest.Change `json:"changes"`
}

type remotePlugin struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	SHA256  string   `json:"sha256"`
	Tools   []string `json:"tools"`
	Running int      `json:"running"`
}

func (p remotePlugin) String() string {
	return fmt.Sprintf("%s %s (sha256 %.12s, tools: %s)", p.Name, p.Version, p.SHA256, strings.Join(p.Tools, ", "))
}

// pluginInstallCmd installs a plugin file on a running host.
func pluginInstallCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rf := addRemoteFlags(fs)
	file, err := parseWithFile(fs, args)
	if err != nil {
		return err
	}
	if _, err := checkSettings("plugin", fs); err != nil {
		return err
	}
	module, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var out pluginChangeView
	if err := rf.do(ctx, http.MethodPost, "/api/v1/plugins", module, &out); err != nil {
		return fmt.Errorf("plugin install %s: %w", file, err)
	}
	fmt.Fprintf(stdout, "installed %s\n", out.Plugin)
	return nil
}

// pluginUpgradeCmd replaces an installed plugin with another version of it.
func pluginUpgradeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin upgrade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rf := addRemoteFlags(fs)
	keep := fs.Bool("keep", false, "keep the replaced version loaded for tool sets pinned to it (tool@VERSION)")
	confirm := fs.Bool("confirm", false, "apply an upgrade that widens the plugin (higher limits, tools, write access, capabilities, hosts); without it such an upgrade is refused and its widenings printed")
	file, err := parseWithFile(fs, args)
	if err != nil {
		return err
	}
	if _, err := checkSettings("plugin", fs); err != nil {
		return err
	}
	module, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	name, err := manifestName(module)
	if err != nil {
		return fmt.Errorf("plugin upgrade %s: %w", file, err)
	}
	q := url.Values{}
	if *keep {
		q.Set("keep", "true")
	}
	if *confirm {
		q.Set("confirmWidening", "true")
	}
	path := "/api/v1/plugins/" + url.PathEscape(name)
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out pluginChangeView
	if err := rf.do(ctx, http.MethodPut, path, module, &out); err != nil {
		var p *remoteProblem
		if errors.As(err, &p) && len(p.Widenings) > 0 {
			fmt.Fprintf(stdout, "the upgrade widens %s:\n", name)
			for _, w := range p.Widenings {
				fmt.Fprintf(stdout, "  %s\n", w)
			}
			fmt.Fprintf(stdout, "nothing changed; run it again with -confirm to apply it\n")
			return fmt.Errorf("plugin upgrade %s: %d widening(s) not confirmed (-confirm)", file, len(p.Widenings))
		}
		return fmt.Errorf("plugin upgrade %s: %w", file, err)
	}
	fmt.Fprintf(stdout, "upgraded %s\n", out.Plugin)
	for _, c := range out.Changes {
		mark := ""
		if c.Widens {
			mark = " (widens)"
		}
		fmt.Fprintf(stdout, "  %s%s\n", c, mark)
	}
	if out.Replaced != nil {
		how := "retired: its running calls end on it"
		if *keep {
			how = "kept for pinned tool sets"
		}
		fmt.Fprintf(stdout, "replaced %s %s (%s; %d running)\n", out.Replaced.Name, out.Replaced.Version, how, out.Replaced.Running)
	}
	return nil
}

// pluginRemoveCmd removes an installed plugin (NAME, or a plugin FILE's name).
func pluginRemoveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin remove", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rf := addRemoteFlags(fs)
	version := fs.String("version", "", "remove only this kept version")
	arg, err := parseWithFile(fs, args)
	if err != nil {
		return err
	}
	if _, err := checkSettings("plugin", fs); err != nil {
		return err
	}
	name := arg
	if strings.HasSuffix(arg, ".wasm") {
		module, err := os.ReadFile(arg)
		if err != nil {
			return err
		}
		if name, err = manifestName(module); err != nil {
			return fmt.Errorf("plugin remove %s: %w", arg, err)
		}
	}
	path := "/api/v1/plugins/" + url.PathEscape(name)
	if *version != "" {
		path += "?version=" + url.QueryEscape(*version)
	}
	var out pluginChangeView
	if err := rf.do(ctx, http.MethodDelete, path, nil, &out); err != nil {
		return fmt.Errorf("plugin remove %s: %w", name, err)
	}
	for _, p := range out.Removed {
		fmt.Fprintf(stdout, "removed %s %s (%d calls still running end on it)\n", p.Name, p.Version, p.Running)
	}
	return nil
}

// manifestName is the plugin name a module's manifest gives.
func manifestName(module []byte) (string, error) {
	m, err := manifest.Read(module)
	if err != nil {
		return "", err
	}
	return m.Name, nil
}

// pluginAuditCmd prints the running host's plugin audit log, oldest first:
// every install, upgrade, upgrade refused for widening and removal, who
// asked and what changed.
func pluginAuditCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rf := addRemoteFlags(fs)
	plugin := fs.String("plugin", "", "only this plugin's records")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if _, err := checkSettings("plugin", fs); err != nil {
		return err
	}
	path := "/api/v1/plugins/audit"
	if *plugin != "" {
		path += "?plugin=" + url.QueryEscape(*plugin)
	}
	var recs []store.PluginAuditRecord
	if err := rf.do(ctx, http.MethodGet, path, nil, &recs); err != nil {
		return fmt.Errorf("plugin audit: %w", err)
	}
	for _, r := range recs {
		fmt.Fprintf(stdout, "%s %s %s %s by %s/%s", r.At.Format(time.RFC3339), r.Action, r.Plugin, versions(r.FromVersion, r.ToVersion), r.ActorTenant, r.ActorUser)
		if r.AllowedBy != "" {
			fmt.Fprintf(stdout, " (widening %s)", r.AllowedBy)
		}
		fmt.Fprintln(stdout)
		for _, c := range r.Changes {
			mark := ""
			if c.Widens {
				mark = " (widens)"
			}
			fmt.Fprintf(stdout, "  %s%s\n", c, mark)
		}
	}
	return nil
}

// versions is "1.0.0 → 2.0.0", or the one side there is.
func versions(from, to string) string {
	switch {
	case from == "":
		return to
	case to == "":
		return from
	}
	return from + " → " + to
}

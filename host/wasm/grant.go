package wasm

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

// A manifest only asks; the operator grants. This file holds what an operator
// grants one third-party plugin (capabilities, mounts, limits above the
// host's ceilings) and the checks that keep a grant from opening the host's
// own state to a guest.

// Grant is what the operator allows one third-party plugin. Built-in plugins
// get the capabilities they declare and no mounts unless granted here too.
type Grant struct {
	// Capabilities the plugin may link (each must also be declared).
	Capabilities []string `json:"capabilities,omitempty"`
	// Mounts are the host directories the plugin sees. The manifest's
	// allowedPaths are requests shown to the operator; only these are mounted.
	Mounts []Mount `json:"mounts,omitempty"`
	// Ceilings raise (or lower) the host's ceilings for this plugin; zero
	// fields keep the host's.
	Ceilings Ceilings `json:"ceilings,omitzero"`
	// SHA256, when set, pins the grant to one module: a plugin of that name
	// with other bytes is refused rather than given the grant (a grant is
	// otherwise keyed by the name the module's own manifest announces).
	SHA256 string `json:"sha256,omitempty"`
	// Uninterruptible lets the plugin load although the host cannot
	// instrument it (it uses SIMD, threads, exceptions, multi-memory or
	// something else the rewrite does not decode). Such a plugin runs in
	// wazero's close-on-context-done mode, which stops its loops and calls
	// at the deadline but not its straight-line bulk work, and which lets
	// it hold up the host's garbage collector for as long as that runs: a
	// plugin granted this is trusted not to. Pin the grant (SHA256) to the
	// module it was given for. Without it such a plugin is refused at load.
	Uninterruptible bool `json:"uninterruptible,omitempty"`
	// Hosts are allow-list entries (the syntax of the manifest's
	// limits.allowedHosts) the operator adds to those the manifest asks
	// for: how a built-in such as webfetch reaches a host its author did
	// not list. They take effect only with the "http" capability.
	Hosts []string `json:"hosts,omitempty"`
}

// Mount is one host directory granted to a plugin.
type Mount struct {
	// HostPath is an absolute directory on the host.
	HostPath string `json:"hostPath"`
	// GuestPath is where the guest sees it (absolute, e.g. "/data").
	GuestPath string `json:"guestPath"`
	// ReadOnly mounts it read-only. Read-only tools always get it read-only.
	ReadOnly bool `json:"readOnly,omitempty"`
}

func (m Mount) String() string {
	s := m.HostPath + ":" + m.GuestPath
	if m.ReadOnly {
		s += ":ro"
	}
	return s
}

// ParseMount reads "HOST:GUEST" or "HOST:GUEST:ro" (the CLI's -mount flag,
// after the plugin name).
func ParseMount(s string) (Mount, error) {
	parts := strings.Split(s, ":")
	var m Mount
	switch {
	case len(parts) == 3 && parts[2] == "ro":
		m = Mount{HostPath: parts[0], GuestPath: parts[1], ReadOnly: true}
	case len(parts) == 3 && parts[2] == "rw":
		m = Mount{HostPath: parts[0], GuestPath: parts[1]}
	case len(parts) == 2:
		m = Mount{HostPath: parts[0], GuestPath: parts[1]}
	default:
		return Mount{}, fmt.Errorf("mount %q: want HOST:GUEST or HOST:GUEST:ro", s)
	}
	if m.HostPath == "" || m.GuestPath == "" {
		return Mount{}, fmt.Errorf("mount %q: want HOST:GUEST or HOST:GUEST:ro", s)
	}
	return m, nil
}

// Ceilings are the most a manifest may ask for. A plugin asking for more is
// refused at load, naming the limit, unless its grant raises the ceiling.
type Ceilings struct {
	MemoryMiB            int           `json:"memoryMiB,omitempty"`
	Timeout              time.Duration `json:"timeout,omitempty"`
	MaxOutputBytes       int64         `json:"maxOutputBytes,omitempty"`
	MaxHTTPResponseBytes int64         `json:"maxHttpResponseBytes,omitempty"`
}

// DefaultCeilings fit every built-in plugin: 1 GiB of guest memory, 10
// minutes a call, 128 MiB of output and 64 MiB per HTTP response.
var DefaultCeilings = Ceilings{
	MemoryMiB:            1024,
	Timeout:              10 * time.Minute,
	MaxOutputBytes:       128 << 20,
	MaxHTTPResponseBytes: 64 << 20,
}

// over returns c with the non-zero fields of o replacing its own.
func (c Ceilings) over(o Ceilings) Ceilings {
	if o.MemoryMiB > 0 {
		c.MemoryMiB = o.MemoryMiB
	}
	if o.Timeout > 0 {
		c.Timeout = o.Timeout
	}
	if o.MaxOutputBytes > 0 {
		c.MaxOutputBytes = o.MaxOutputBytes
	}
	if o.MaxHTTPResponseBytes > 0 {
		c.MaxHTTPResponseBytes = o.MaxHTTPResponseBytes
	}
	return c
}

// ErrOverCeiling is wrapped by the refusal of a manifest that asks for more
// than the host allows.
var ErrOverCeiling = errors.New("limit above the host's ceiling")

// check refuses manifest limits above the ceilings.
func (c Ceilings) check(l manifest.Limits) error {
	var errs []error
	over := func(field string, asked, ceiling any) {
		errs = append(errs, fmt.Errorf("%w: limits.%s asks for %v, the host allows at most %v (an operator may raise it for this plugin)", ErrOverCeiling, field, asked, ceiling))
	}
	if l.MemoryMiB > c.MemoryMiB {
		over("memoryMiB", l.MemoryMiB, c.MemoryMiB)
	}
	if int64(l.TimeoutMs) > c.Timeout.Milliseconds() {
		over("timeoutMs", l.TimeoutMs, c.Timeout.Milliseconds())
	}
	if l.MaxOutputBytes > c.MaxOutputBytes {
		over("maxOutputBytes", l.MaxOutputBytes, c.MaxOutputBytes)
	}
	if l.MaxHTTPResponseBytes > c.MaxHTTPResponseBytes {
		over("maxHttpResponseBytes", l.MaxHTTPResponseBytes, c.MaxHTTPResponseBytes)
	}
	if l.MemoryMiB < 0 || l.TimeoutMs < 0 || l.MaxOutputBytes < 0 || l.MaxHTTPResponseBytes < 0 {
		errs = append(errs, errors.New("limits must not be negative"))
	}
	return errors.Join(errs...)
}

// ErrMountRefused is wrapped by the refusal of a granted mount that would
// expose the host.
var ErrMountRefused = errors.New("mount refused")

// systemRoots are host trees no mount may reach into or contain: the kernel's
// views of processes and devices.
var systemRoots = []string{"/proc", "/sys", "/dev", "/run", "/boot", "/etc"}

// checkMounts resolves every granted mount (symbolic links followed) and
// refuses one that is not an existing directory, is the file system root,
// lies inside or contains a protected directory (data, blobs, compile
// cache) or a system tree, or mounts over another.
func checkMounts(ms []Mount, protected []string) ([]Mount, error) {
	var prot []string
	for _, p := range protected {
		if p == "" {
			continue
		}
		r, err := resolveDir(p)
		if err != nil {
			// A protected directory that does not exist yet is still protected
			// by its absolute, cleaned path.
			r, err = filepath.Abs(p)
			if err != nil {
				return nil, err
			}
		}
		prot = append(prot, r)
	}
	out := make([]Mount, 0, len(ms))
	guests := map[string]bool{}
	for _, m := range ms {
		if !filepath.IsAbs(m.HostPath) {
			return nil, fmt.Errorf("%w: %s: the host path must be absolute", ErrMountRefused, m)
		}
		host, err := resolveDir(m.HostPath)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMountRefused, m, err)
		}
		if host == "/" {
			return nil, fmt.Errorf("%w: %s: the file system root cannot be mounted", ErrMountRefused, m)
		}
		for _, s := range systemRoots {
			if overlaps(host, s) {
				return nil, fmt.Errorf("%w: %s: it overlaps the system directory %s", ErrMountRefused, m, s)
			}
		}
		for _, p := range prot {
			if overlaps(host, p) {
				return nil, fmt.Errorf("%w: %s: it overlaps the host's own directory %s (data, blobs or compile cache)", ErrMountRefused, m, p)
			}
		}
		g := path.Clean(m.GuestPath)
		if !path.IsAbs(g) || g == "/" {
			return nil, fmt.Errorf("%w: %s: the guest path must be absolute and not /", ErrMountRefused, m)
		}
		if guests[g] {
			return nil, fmt.Errorf("%w: %s: guest path %s is mounted twice", ErrMountRefused, m, g)
		}
		guests[g] = true
		out = append(out, Mount{HostPath: host, GuestPath: g, ReadOnly: m.ReadOnly})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GuestPath < out[j].GuestPath })
	return out, nil
}

func resolveDir(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(r)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", r)
	}
	return r, nil
}

// overlaps reports whether a is b, lies inside b, or contains b.
func overlaps(a, b string) bool {
	return within(a, b) || within(b, a)
}

func within(p, dir string) bool {
	if p == dir {
		return true
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// Assessment is what a host would make of a plugin: what it asks for, what
// the operator grants, and why it would be refused. Load acts on it; `plugin
// inspect -grants` and the plugins API show it.
type Assessment struct {
	// Granted are the declared capabilities the plugin is linked to;
	// NotGranted the declared ones the operator has not granted.
	Granted    []string `json:"granted"`
	NotGranted []string `json:"notGranted,omitempty"`
	// Mounts are the operator's mounts as they would be made.
	Mounts []Mount `json:"mounts"`
	// RequestedPaths are the manifest's allowedPaths: shown, never mounted.
	RequestedPaths map[string]string `json:"requestedPaths,omitempty"`
	// Hosts are the hosts the plugin may reach over HTTP: the manifest's
	// allowedHosts and the operator's grant (GrantedHosts of them).
	Hosts        []string `json:"hosts,omitempty"`
	GrantedHosts []string `json:"grantedHosts,omitempty"`
	// Ceilings are the most this plugin may ask for; Limits what it runs under.
	Ceilings Limits `json:"ceilings"`
	Limits   Limits `json:"limits"`
	// Problems are the reasons the host refuses the plugin; empty: it loads.
	Problems []string `json:"problems,omitempty"`
}

// Assess checks a manifest against the configuration without loading or
// running anything (signatures and imports are checked by Load).
func (c Config) Assess(m *manifest.Manifest, builtin bool) Assessment {
	a, _ := c.assess(m, builtin)
	return a
}

func (c Config) assess(m *manifest.Manifest, builtin bool) (Assessment, error) {
	var a Assessment
	var errs []error
	grant := c.grants[m.Name]
	for i, name := range m.Capabilities {
		if c.registry != nil {
			if _, ok := c.registry.Lookup(name); !ok {
				errs = append(errs, fmt.Errorf("capabilities[%d]: unknown capability %q (known: %s)", i, name, strings.Join(c.registry.Names(), ", ")))
				continue
			}
		}
		ok := builtin || c.grantDeclared
		for _, g := range grant.Capabilities {
			ok = ok || g == name
		}
		if ok {
			a.Granted = append(a.Granted, name)
		} else {
			a.NotGranted = append(a.NotGranted, name)
			errs = append(errs, fmt.Errorf("capability %q is declared but not granted by the operator", name))
		}
	}
	ceil := c.ceilings.over(grant.Ceilings)
	a.Ceilings = Limits{MemoryMiB: ceil.MemoryMiB, TimeoutMs: ceil.Timeout.Milliseconds(), MaxOutputBytes: ceil.MaxOutputBytes, MaxHTTPResponseBytes: ceil.MaxHTTPResponseBytes}
	if err := ceil.check(m.Limits); err != nil {
		errs = append(errs, err)
	}
	l := c.limitsFor(m, ceil)
	a.Limits = Limits{MemoryMiB: int(l.memoryPages / 16), TimeoutMs: l.timeout.Milliseconds(), MaxOutputBytes: l.maxOutput, MaxHTTPResponseBytes: l.maxHTTP}
	mounts, err := checkMounts(grant.Mounts, append([]string{c.cacheDir}, c.protected...))
	if err != nil {
		errs = append(errs, err)
		mounts = grant.Mounts
	}
	a.Mounts = append([]Mount{}, mounts...)
	a.RequestedPaths = m.Limits.AllowedPaths
	a.Hosts = append([]string(nil), m.Limits.AllowedHosts...)
	for i, h := range grant.Hosts {
		if _, err := egress.ParseHostEntry(h); err != nil {
			errs = append(errs, fmt.Errorf("grant hosts[%d]: %w", i, err))
			continue
		}
		a.GrantedHosts = append(a.GrantedHosts, h)
		if !slices.Contains(a.Hosts, h) {
			a.Hosts = append(a.Hosts, h)
		}
	}
	for _, e := range errs {
		a.Problems = append(a.Problems, e.Error())
	}
	return a, errors.Join(errs...)
}

// limitsFor returns a plugin's limits: what its manifest asks for (checked
// against the ceilings already), else the host's defaults, never above the
// ceilings.
func (c Config) limitsFor(m *manifest.Manifest, ceil Ceilings) limits {
	d := c.defaults
	l := limits{
		memoryPages: uint32(min(d.MemoryMiB, ceil.MemoryMiB)) * 16,
		timeout:     min(d.Timeout, ceil.Timeout),
		maxOutput:   min(d.MaxOutputBytes, ceil.MaxOutputBytes),
		maxHTTP:     min(d.MaxHTTPResponseBytes, ceil.MaxHTTPResponseBytes),
	}
	if m.Limits.MemoryMiB > 0 {
		l.memoryPages = uint32(m.Limits.MemoryMiB) * 16
	}
	if m.Limits.TimeoutMs > 0 {
		l.timeout = time.Duration(m.Limits.TimeoutMs) * time.Millisecond
	}
	if m.Limits.MaxOutputBytes > 0 {
		l.maxOutput = m.Limits.MaxOutputBytes
	}
	if m.Limits.MaxHTTPResponseBytes > 0 {
		l.maxHTTP = m.Limits.MaxHTTPResponseBytes
	}
	return l
}

// Package signin signs people in through their organisation's identity
// provider with OpenID Connect (authorization code flow with PKCE, state
// and nonce, discovery, the provider's rotating keys), ends their sessions
// when the provider says so (OpenID Connect Back-Channel Logout 1.0) or
// when they sign out here (RP-initiated logout), and invites people by
// e-mail to a tenant.
//
// Every provider is bound to one tenant and a list of allowed e-mail
// domains; people are provisioned on first sign-in (just in time) or only
// when invited, and their roles are mapped from a claim of the provider's
// tokens, within that tenant only. Providers are configured by the
// operator (the signIn: section of the configuration file); client secrets
// come from environment variables and are never logged.
package signin

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenthost/agenthost/host/tenancy"
)

// Provisioning says who may sign in through a provider.
type Provisioning string

const (
	// JustInTime makes a user for anyone of an allowed domain at the first
	// sign-in.
	JustInTime Provisioning = "justInTime"
	// InvitedOnly admits only people an admin invited (and users the tenant
	// has already).
	InvitedOnly Provisioning = "invitation"
)

// RoleMapping maps values of a provider's claim (a group, an app role) to
// agenthost roles in the provider's tenant.
type RoleMapping struct {
	// Claim names the claim holding the values: a string or a list of
	// strings, e.g. "groups" (Entra ID, Okta, Keycloak with a groups
	// mapper) or "roles" (Entra ID app roles).
	Claim string `yaml:"claim"`
	// Admin lists values that make a person a tenant admin.
	Admin []string `yaml:"admin"`
	// Workspaces lists values that give a role in a workspace.
	Workspaces []WorkspaceRole `yaml:"workspaces"`
}

// WorkspaceRole is one value → workspace role mapping.
type WorkspaceRole struct {
	Value string `yaml:"value"`
	// Workspace is the workspace's id or name in the provider's tenant.
	Workspace string       `yaml:"workspace"`
	Role      tenancy.Role `yaml:"role"`
}

// Provider is one identity provider as the operator configures it.
type Provider struct {
	// Name identifies the provider in URLs (/auth/oidc/<name>/…) and
	// records: lower-case letters, digits and dashes.
	Name string `yaml:"name"`
	// Label is the button's text: "Sign in with <Label>" [Name].
	Label string `yaml:"label"`
	// Issuer is the provider's issuer URL; discovery reads
	// <Issuer>/.well-known/openid-configuration.
	Issuer   string `yaml:"issuer"`
	ClientID string `yaml:"clientID"`
	// ClientSecretEnv names the environment variable holding the client
	// secret (empty: a public client, PKCE only).
	ClientSecretEnv string `yaml:"clientSecretEnv"`
	// ClientSecret is read from ClientSecretEnv; never from the file.
	ClientSecret string `yaml:"-"`
	// Scopes requested besides openid [email profile].
	Scopes []string `yaml:"scopes"`
	// Tenant is the id or name of the tenant the provider signs in to.
	Tenant string `yaml:"tenant"`
	// AllowedDomains are the e-mail domains admitted (required: a provider
	// such as Google signs in anyone on earth). An invitation admits its
	// own address whatever its domain.
	AllowedDomains []string `yaml:"allowedDomains"`
	// Provisioning is justInTime or invitation [invitation].
	Provisioning Provisioning `yaml:"provisioning"`
	// Roles maps a claim to roles [none].
	Roles RoleMapping `yaml:"roles"`
	// RequireVerifiedEmail refuses tokens whose email_verified is false
	// [true]; Entra ID sends no email_verified, set it false there (its
	// addresses are the directory's).
	RequireVerifiedEmail *bool `yaml:"requireVerifiedEmail"`
}

// SMTP is the mail server invitations are sent through.
type SMTP struct {
	Host string `yaml:"host"`
	Port int    `yaml:"port"`
	// Username and PasswordEnv authenticate (PLAIN, over TLS only).
	Username    string `yaml:"username"`
	PasswordEnv string `yaml:"passwordEnv"`
	Password    string `yaml:"-"`
	// From is the sender address.
	From string `yaml:"from"`
	// TLS is "starttls" [default], "tls" (implicit, port 465) or "none"
	// (a relay on localhost only).
	TLS string `yaml:"tls"`
}

// Config is the signIn: section of the configuration file.
type Config struct {
	// PublicURL is the server's address as browsers reach it, e.g.
	// https://agenthost.example.com; redirect URIs are built from it.
	PublicURL string     `yaml:"publicURL"`
	Providers []Provider `yaml:"providers"`
	// InvitationTTL is how long an invitation link is valid [7 days].
	InvitationTTL time.Duration `yaml:"-"`
	// SMTP, when set, mails invitations; otherwise the link is shown to
	// the admin to pass on.
	SMTP *SMTP `yaml:"smtp"`
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// LoadConfig reads the signIn: section of the YAML or JSON configuration
// file at path ("" for none) and the secrets its *Env keys name through
// env. Unknown keys are errors; other sections are left to their owners.
// A missing section is the zero Config (no providers).
func LoadConfig(path string, env func(string) string) (Config, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	var cfg Config
	if path == "" {
		return cfg, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("signin: reading configuration: %w", err)
	}
	var root struct {
		SignIn yaml.Node `yaml:"signIn"`
	}
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Config{}, fmt.Errorf("signin: configuration %s: %w", path, err)
	}
	if root.SignIn.Kind == 0 {
		return cfg, nil
	}
	if cfg, err = ParseSection(&root.SignIn); err != nil {
		return Config{}, fmt.Errorf("signin: configuration %s: %w", path, err)
	}
	return Resolve(cfg, path, env)
}

// ParseSection decodes the file's signIn: section (node; nil for none)
// strictly: an unknown key or an unreadable value is an error naming it.
// The secrets its *Env keys name are read by Resolve. It is how the
// server's one parse of the whole file (host/server) takes this section.
func ParseSection(node *yaml.Node) (Config, error) {
	if node == nil || node.Kind == 0 {
		return Config{}, nil
	}
	var raw struct {
		Config        `yaml:",inline"`
		InvitationTTL string `yaml:"invitationTTL"`
	}
	dec := yaml.NewDecoder(strings.NewReader(mustMarshal(node)))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return Config{}, fmt.Errorf("signIn: %w", err)
	}
	cfg := raw.Config
	if raw.InvitationTTL != "" {
		var err error
		if cfg.InvitationTTL, err = time.ParseDuration(raw.InvitationTTL); err != nil {
			return Config{}, fmt.Errorf("signIn.invitationTTL=%q: %w", raw.InvitationTTL, err)
		}
	}
	return cfg, nil
}

// Resolve reads the secrets cfg's *Env keys name through env (nil: none)
// and validates it; path names the file in errors.
func Resolve(cfg Config, path string, env func(string) string) (Config, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		if p.ClientSecretEnv != "" {
			if p.ClientSecret = env(p.ClientSecretEnv); p.ClientSecret == "" {
				return Config{}, fmt.Errorf("signin: signIn.providers[%d].clientSecretEnv: %s is not set", i, p.ClientSecretEnv)
			}
		}
	}
	if cfg.SMTP != nil && cfg.SMTP.PasswordEnv != "" {
		if cfg.SMTP.Password = env(cfg.SMTP.PasswordEnv); cfg.SMTP.Password == "" {
			return Config{}, fmt.Errorf("signin: signIn.smtp.passwordEnv: %s is not set", cfg.SMTP.PasswordEnv)
		}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("signin: configuration %s:\n%w", path, err)
	}
	return cfg, nil
}

func mustMarshal(n *yaml.Node) string {
	b, err := yaml.Marshal(n)
	if err != nil {
		return ""
	}
	return string(b)
}

// withDefaults fills what the operator left out.
func (c Config) withDefaults() Config {
	if c.InvitationTTL <= 0 {
		c.InvitationTTL = 7 * 24 * time.Hour
	}
	ps := make([]Provider, len(c.Providers))
	for i, p := range c.Providers {
		if p.Label == "" {
			p.Label = p.Name
		}
		if p.Provisioning == "" {
			p.Provisioning = InvitedOnly
		}
		if len(p.Scopes) == 0 {
			p.Scopes = []string{"email", "profile"}
		}
		if p.RequireVerifiedEmail == nil {
			t := true
			p.RequireVerifiedEmail = &t
		}
		for j, d := range p.AllowedDomains {
			p.AllowedDomains[j] = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(d), "@"))
		}
		ps[i] = p
	}
	c.Providers = ps
	if c.SMTP != nil {
		s := *c.SMTP
		if s.TLS == "" {
			s.TLS = "starttls"
		}
		if s.Port == 0 {
			s.Port = map[string]int{"tls": 465, "starttls": 587, "none": 25}[s.TLS]
		}
		c.SMTP = &s
	}
	return c
}

// Validate reports every mistake in the configuration, each naming its
// field.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("signIn.%s: "+format, append([]any{field}, a...)...))
	}
	if len(c.Providers) > 0 {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("publicURL", "%q is not an http(s) URL (redirect URIs are built from it)", c.PublicURL)
		}
	}
	if c.InvitationTTL < 0 {
		bad("invitationTTL", "must not be negative")
	}
	seen := map[string]bool{}
	for i, p := range c.withDefaults().Providers {
		f := func(k string) string { return fmt.Sprintf("providers[%d].%s", i, k) }
		if !nameRE.MatchString(p.Name) {
			bad(f("name"), "%q: lower-case letters, digits and dashes, at most 40", p.Name)
		} else if seen[p.Name] {
			bad(f("name"), "%q twice", p.Name)
		}
		seen[p.Name] = true
		if u, err := url.Parse(p.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad(f("issuer"), "%q is not an http(s) URL", p.Issuer)
		}
		if p.ClientID == "" {
			bad(f("clientID"), "required")
		}
		if p.Tenant == "" {
			bad(f("tenant"), "required: the tenant (id or name) the provider signs in to")
		}
		if len(p.AllowedDomains) == 0 {
			bad(f("allowedDomains"), "required: the e-mail domains admitted")
		}
		for _, d := range p.AllowedDomains {
			if d == "" || strings.ContainsAny(d, "@/ ") {
				bad(f("allowedDomains"), "%q is not a domain", d)
			}
		}
		if p.Provisioning != JustInTime && p.Provisioning != InvitedOnly {
			bad(f("provisioning"), "%q: justInTime or invitation", p.Provisioning)
		}
		if (len(p.Roles.Admin) > 0 || len(p.Roles.Workspaces) > 0) && p.Roles.Claim == "" {
			bad(f("roles.claim"), "required with a role mapping")
		}
		for j, w := range p.Roles.Workspaces {
			if w.Value == "" || w.Workspace == "" {
				bad(f(fmt.Sprintf("roles.workspaces[%d]", j)), "value and workspace are required")
			}
			if err := w.Role.Validate(); err != nil {
				bad(f(fmt.Sprintf("roles.workspaces[%d].role", j)), "%v", err)
			}
		}
	}
	if s := c.withDefaults().SMTP; s != nil {
		if s.Host == "" {
			bad("smtp.host", "required")
		}
		if s.From == "" || !strings.Contains(s.From, "@") {
			bad("smtp.from", "%q is not an address", s.From)
		}
		if s.TLS != "starttls" && s.TLS != "tls" && s.TLS != "none" {
			bad("smtp.tls", "%q: starttls, tls or none", s.TLS)
		}
		if s.TLS == "none" && s.Username != "" {
			bad("smtp.username", "a password is never sent without TLS")
		}
	}
	return errors.Join(errs...)
}

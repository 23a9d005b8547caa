package signin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/signin"
)

// TestLoadConfig: the signIn: section is read with its defaults, secrets
// come from the environment only, and every mistake names its field.
func TestLoadConfig(t *testing.T) {
	const good = `llm:
  providers: []
signIn:
  publicURL: https://agenthost.example.com
  invitationTTL: 48h
  providers:
    - name: entra
      issuer: https://login.microsoftonline.com/t/v2.0
      clientID: app
      clientSecretEnv: ENTRA_SECRET
      tenant: Acme
      allowedDomains: ["@Acme.com"]
      roles:
        claim: roles
        admin: [agenthost.admin]
        workspaces:
          - {value: sales, workspace: Sales, role: member}
  smtp:
    host: mail.example.com
    username: agenthost
    passwordEnv: SMTP_PASSWORD
    from: agenthost@example.com
`
	write := func(body string) string {
		p := filepath.Join(t.TempDir(), "agenthost.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := map[string]string{"ENTRA_SECRET": "s3cret", "SMTP_PASSWORD": "pw"}
	cfg, err := signin.LoadConfig(write(good), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.InvitationTTL != 48*time.Hour || len(cfg.Providers) != 1 || cfg.Providers[0].ClientSecret != "s3cret" || cfg.SMTP.Password != "pw" {
		t.Fatalf("config %+v", cfg)
	}
	svc, err := signin.New(cfg, signin.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	p := svc.Config().Providers[0]
	if p.Label != "entra" || p.Provisioning != signin.InvitedOnly || p.AllowedDomains[0] != "acme.com" || !*p.RequireVerifiedEmail ||
		svc.Config().SMTP.Port != 587 || svc.Config().SMTP.TLS != "starttls" {
		t.Fatalf("defaults %+v %+v", p, svc.Config().SMTP)
	}
	if got := svc.RedirectURI("entra"); got != "https://agenthost.example.com/auth/oidc/entra/callback" {
		t.Fatalf("redirect URI %s", got)
	}
	if cfg, err := signin.LoadConfig("", nil); err != nil || len(cfg.Providers) != 0 {
		t.Fatalf("no file: %+v %v", cfg, err)
	}
	if cfg, err := signin.LoadConfig(write("llm: {}\n"), nil); err != nil || len(cfg.Providers) != 0 {
		t.Fatalf("no section: %+v %v", cfg, err)
	}

	for _, c := range []struct{ name, from, to, want string }{
		{"unknown key", "tenant: Acme", "tenant: Acme\n      tennant: x", "tennant"},
		{"secret in the file", "clientSecretEnv: ENTRA_SECRET", "clientSecret: s3cret", "clientSecret"},
		{"secret variable unset", "ENTRA_SECRET", "UNSET_SECRET", "UNSET_SECRET is not set"},
		{"bad name", "name: entra", "name: Entra ID", "providers[0].name"},
		{"no tenant", "tenant: Acme", "tenant: \"\"", "providers[0].tenant"},
		{"no domains", `allowedDomains: ["@Acme.com"]`, "allowedDomains: []", "allowedDomains"},
		{"bad issuer", "issuer: https://login.microsoftonline.com/t/v2.0", "issuer: login.example", "issuer"},
		{"bad role", "role: member", "role: owner", "roles.workspaces[0].role"},
		{"bad provisioning", "tenant: Acme", "tenant: Acme\n      provisioning: sometimes", "provisioning"},
		{"no public URL", "publicURL: https://agenthost.example.com", "publicURL: \"\"", "publicURL"},
		{"bad TTL", "invitationTTL: 48h", "invitationTTL: two days", "invitationTTL"},
		{"password without TLS", "from: agenthost@example.com", "from: agenthost@example.com\n    tls: none", "smtp.username"},
	} {
		_, err := signin.LoadConfig(write(strings.Replace(good, c.from, c.to, 1)), func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the secret: %v", c.name, err)
		}
	}
}

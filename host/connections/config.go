package connections

import (
	"fmt"
	"github.com/agenthost/agenthost/host/secrets"
	"strings"
)

// FromEnv builds the service from the environment, or returns nil when
// AGENTHOST_SECRET_KEY is unset: without a key no secret is ever stored,
// and the host runs without connections. The providers are
// DefaultProviders and the OAuth clients named in AGENTHOST_OAUTH_PROVIDERS
// (comma-separated), each configured by AGENTHOST_OAUTH_<NAME>_CLIENT_ID,
// _CLIENT_SECRET, _AUTH_URL, _TOKEN_URL, _REDIRECT_URL, _SCOPES, _HOSTS
// and _DOWNLOAD_HOSTS (comma- or space-separated) and _BASE_URL (its API
// root). A provider
// the host knows by name (microsoft, with _TENANT, default "common";
// google) has defaults for all but the client id, secret and redirect URL.
//
// with adjusts the options before the service is made (the host's egress
// settings for checks: Options.Check).
func FromEnv(getenv func(string) string, st Store, with ...func(*Options)) (*Service, error) {
	raw := getenv("AGENTHOST_SECRET_KEY")
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	key, err := secrets.ParseKey(raw)
	if err != nil {
		return nil, fmt.Errorf("AGENTHOST_SECRET_KEY: %w", err)
	}
	sealer, err := secrets.NewSealer(key)
	if err != nil {
		return nil, err
	}
	providers := DefaultProviders()
	for _, name := range list(getenv("AGENTHOST_OAUTH_PROVIDERS")) {
		env := func(k string) string {
			return strings.TrimSpace(getenv("AGENTHOST_OAUTH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_" + k))
		}
		p := Provider{Name: name, Hosts: list(env("HOSTS")), DownloadHosts: list(env("DOWNLOAD_HOSTS")), BaseURL: env("BASE_URL"), OAuth: &OAuth{ClientID: env("CLIENT_ID"), ClientSecret: env("CLIENT_SECRET"),
			AuthURL: env("AUTH_URL"), TokenURL: env("TOKEN_URL"), RedirectURL: env("REDIRECT_URL"), Scopes: list(env("SCOPES"))}}
		p = withDefaults(p, env("TENANT"))
		replaced := false
		for i := range providers {
			if providers[i].Name == name {
				providers[i], replaced = p, true
			}
		}
		if !replaced {
			providers = append(providers, p)
		}
	}
	o := Options{Store: st, Sealer: sealer, Providers: providers}
	for _, f := range with {
		f(&o)
	}
	return New(o)
}

func list(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

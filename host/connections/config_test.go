package connections_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/store"
)

func TestFromEnv(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	for name, tc := range map[string]struct {
		env     map[string]string
		wantNil bool
		err     string
	}{
		"no key: no connections": {env: map[string]string{}, wantNil: true},
		"short key":              {env: map[string]string{"AGENTHOST_SECRET_KEY": base64.StdEncoding.EncodeToString([]byte("short"))}, err: "32 bytes"},
		"not base64":             {env: map[string]string{"AGENTHOST_SECRET_KEY": "!!!"}, err: "base64"},
		"key":                    {env: map[string]string{"AGENTHOST_SECRET_KEY": key}},
		"oauth provider": {env: map[string]string{"AGENTHOST_SECRET_KEY": key, "AGENTHOST_OAUTH_PROVIDERS": "google",
			"AGENTHOST_OAUTH_GOOGLE_CLIENT_ID": "id", "AGENTHOST_OAUTH_GOOGLE_AUTH_URL": "https://accounts.google.com/o/oauth2/v2/auth",
			"AGENTHOST_OAUTH_GOOGLE_TOKEN_URL": "https://oauth2.googleapis.com/token", "AGENTHOST_OAUTH_GOOGLE_REDIRECT_URL": "https://h/api/v1/connections/callback",
			"AGENTHOST_OAUTH_GOOGLE_HOSTS": "www.googleapis.com,gmail.googleapis.com"}},
		"oauth provider incomplete": {env: map[string]string{"AGENTHOST_SECRET_KEY": key, "AGENTHOST_OAUTH_PROVIDERS": "google"}, err: "client id"},
		"oauth bad host": {env: map[string]string{"AGENTHOST_SECRET_KEY": key, "AGENTHOST_OAUTH_PROVIDERS": "x",
			"AGENTHOST_OAUTH_X_CLIENT_ID": "id", "AGENTHOST_OAUTH_X_AUTH_URL": "a", "AGENTHOST_OAUTH_X_TOKEN_URL": "t", "AGENTHOST_OAUTH_X_REDIRECT_URL": "r",
			"AGENTHOST_OAUTH_X_HOSTS": "a.b:0"}, err: "port"},
		"oauth bad download host": {env: map[string]string{"AGENTHOST_SECRET_KEY": key, "AGENTHOST_OAUTH_PROVIDERS": "x",
			"AGENTHOST_OAUTH_X_CLIENT_ID": "id", "AGENTHOST_OAUTH_X_AUTH_URL": "a", "AGENTHOST_OAUTH_X_TOKEN_URL": "t", "AGENTHOST_OAUTH_X_REDIRECT_URL": "r",
			"AGENTHOST_OAUTH_X_DOWNLOAD_HOSTS": "dl.example:http"}, err: "port"},
	} {
		svc, err := connections.FromEnv(func(k string) string { return tc.env[k] }, &store.DB{})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v", name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case (svc == nil) != tc.wantNil:
			t.Errorf("%s: service %v", name, svc)
		}
	}
}

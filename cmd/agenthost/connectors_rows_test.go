package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/connections/fakes/jira"
	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
)

// The provider rows of TestConnectorsEndToEnd (connectors_e2e_test.go):
// each starts its fakes and says how the flow uses them.

// e2eProviders is the table: one row per provider. A row is a name and a
// start function returning e2eFakes (see there for each field).
func e2eProviders() []e2eProvider {
	return []e2eProvider{
		{name: "jira", start: startJira},
		{name: "oauth-thirdparty", start: startThirdParty},
		{name: "microsoft", start: startMicrosoft},
		{name: "google", start: startGoogle},
		{name: "sftp", start: startSFTP},
	}
}

// corpusPDF is a small real PDF of the repository's corpus.
func corpusPDF(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "pdf", "deb-camlidl-1.04.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startJira: the fake Jira Cloud site at acme.atlassian.net (resolved to
// loopback by -resolve, allowed by -allow-host on its port only), an issue
// with a PDF attachment, and a basic connection (e-mail and API token)
// made with POST /connections.
func startJira(t *testing.T, _ string) *e2eFakes {
	const email, token = "me@acme.example", "jira-api-token-e2e-7"
	site := jira.New(email, token)
	t.Cleanup(site.Close)
	pdf := corpusPDF(t)
	issue := site.AddIssue("PROJ-7", "Port camlidl", "In Progress", jira.Attachment{Filename: "camlidl.pdf", MIMEType: "application/pdf", Content: pdf})
	u, _ := url.Parse(site.URL)
	siteURL := "http://acme.atlassian.net:" + u.Port()
	return &e2eFakes{
		args: []string{"-resolve", "acme.atlassian.net=127.0.0.1", "-allow-host", "acme.atlassian.net:" + u.Port()},
		connect: func(t *testing.T, s *e2eServer) string {
			var c struct{ ID, Provider, Auth string }
			st, body := s.do(t, "POST", "/connections", map[string]string{"provider": "jira", "label": "acme", "auth": "basic",
				"baseUrl": siteURL, "account": email, "token": token})
			if st != 201 || json.Unmarshal(body, &c) != nil || c.ID == "" || c.Provider != "jira" || bytes.Contains(body, []byte(token)) {
				t.Fatalf("POST /connections: %d %s", st, body)
			}
			return c.ID
		},
		service: "issues", browse: "PROJ-7", download: "PROJ-7/" + issue.Attachments[0].ID,
		fileName: "camlidl.pdf", mimeType: "application/pdf", text: "camlidl", data: pdf,
		secrets: func() []string {
			return []string{token, base64.StdEncoding.EncodeToString([]byte(email + ":" + token))}
		},
		requests: func() int { return len(site.Requests()) },
		check: func(t *testing.T) {
			// The connector went to the site by its name: the attachment's
			// content was fetched there, with the host's credentials.
			reqs := strings.Join(site.Requests(), "\n")
			if !strings.Contains(reqs, "/rest/api/3/attachment/content/"+issue.Attachments[0].ID) {
				t.Fatalf("the site saw:\n%s", reqs)
			}
		},
	}
}

// startThirdParty: an OAuth provider "acme" (the operator's client
// registration in AGENTHOST_OAUTH_ACME_*, fakes/oauth as its authorisation
// server) whose API at api.acme.test the third-party connector of
// host/wasm/testdata/plugins/thirdparty speaks (a drive and a mail
// service). The connection is made by the real dance: POST
// /connections/authorize, the user's consent at the provider, GET
// /connections/callback with the code.
func startThirdParty(t *testing.T, base string) *e2eFakes {
	as := oauth.New("e2e-client", "e2e-client-secret", base+"/api/v1/connections/callback")
	t.Cleanup(as.Close)
	api := newAcmeAPI(as)
	t.Cleanup(api.Close)
	u, _ := url.Parse(api.URL)
	host := "api.acme.test:" + u.Port()
	for k, v := range map[string]string{
		"AGENTHOST_OAUTH_PROVIDERS":          "acme",
		"AGENTHOST_OAUTH_ACME_CLIENT_ID":     as.ClientID,
		"AGENTHOST_OAUTH_ACME_CLIENT_SECRET": as.ClientSecret,
		"AGENTHOST_OAUTH_ACME_AUTH_URL":      as.AuthURL(),
		"AGENTHOST_OAUTH_ACME_TOKEN_URL":     as.TokenURL(),
		"AGENTHOST_OAUTH_ACME_REDIRECT_URL":  as.RedirectURI,
		"AGENTHOST_OAUTH_ACME_SCOPES":        "read write",
		"AGENTHOST_OAUTH_ACME_HOSTS":         host,
		"AGENTHOST_OAUTH_ACME_BASE_URL":      "http://" + host,
	} {
		t.Setenv(k, v)
	}
	text := []byte("Quarterly report.\n\nThe camlidl port shipped; revenue rose by eight percent.\n")
	api.files["q3"] = acmeFile{Name: "Quarterly report", Data: text}
	return &e2eFakes{
		args:    []string{"-resolve", "api.acme.test=127.0.0.1", "-allow-host", host, "-grant", "thirdparty=connection"},
		plugins: map[string][]byte{"thirdparty": wasmtest.Module(t, "thirdparty")},
		connect: func(t *testing.T, s *e2eServer) string {
			// An API client's grant, then the browser's, which the flow uses.
			oauthConnect(t, s, as, "acme")
			return oauthConnectBrowser(t, s, as, "acme")
		},
		service: "drive", browse: "", download: "q3",
		fileName: "q3.txt", mimeType: "text/plain", text: "revenue", data: text,
		mailService: "mail",
		sentMail:    api.sent,
		secrets:     as.Issued,
		requests:    api.received,
		check: func(t *testing.T) {
			if n := api.authorised(); n < 3 {
				t.Fatalf("the API saw %d authorised requests, want browse, download and mail", n)
			}
		},
	}
}

// acmeAPI is the API of provider acme as host/wasm/testdata/plugins/thirdparty
// speaks it: GET /v1/files (a JSON list of {id, name}), GET /v1/files/{id}
// (the content), POST /v1/mail and GET /v1/mail; every request needs a
// Bearer token the authorisation server issued and still accepts.
type acmeAPI struct {
	*httptest.Server
	as    *oauth.Server
	mu    sync.Mutex
	files map[string]acmeFile
	mail  []e2eMail
	auths int
	total int
}

type acmeFile struct {
	Name string
	Data []byte
}

func (a *acmeAPI) sent() []e2eMail {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]e2eMail(nil), a.mail...)
}

func (a *acmeAPI) received() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total
}

func (a *acmeAPI) authorised() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.auths
}

func newAcmeAPI(as *oauth.Server) *acmeAPI {
	a := &acmeAPI{as: as, files: map[string]acmeFile{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/files", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		list := []map[string]string{}
		for id, f := range a.files {
			list = append(list, map[string]string{"id": id, "name": f.Name})
		}
		a.mu.Unlock()
		writeJSONBody(w, http.StatusOK, list)
	})
	mux.HandleFunc("GET /v1/files/{id}", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		f, ok := a.files[r.PathValue("id")]
		a.mu.Unlock()
		if !ok {
			writeJSONBody(w, http.StatusNotFound, map[string]string{"error": "not_found"})
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(f.Data)
	})
	mux.HandleFunc("POST /v1/mail", func(w http.ResponseWriter, r *http.Request) {
		var m e2eMail
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.To) == 0 {
			writeJSONBody(w, http.StatusBadRequest, map[string]string{"error": "invalid_mail"})
			return
		}
		a.mu.Lock()
		a.mail = append(a.mail, m)
		a.mu.Unlock()
		writeJSONBody(w, http.StatusOK, m)
	})
	mux.HandleFunc("GET /v1/mail", func(w http.ResponseWriter, r *http.Request) {
		writeJSONBody(w, http.StatusOK, map[string]any{"messages": a.sent()})
	})
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.total++
		a.mu.Unlock()
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !as.Valid(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			writeJSONBody(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
			return
		}
		a.mu.Lock()
		a.auths++
		a.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	return a
}

func writeJSONBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

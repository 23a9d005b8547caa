package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections/fakes/google"
	"github.com/agenthost/agenthost/host/connections/fakes/graph"
	"github.com/agenthost/agenthost/host/connections/fakes/oauth"
)

// The rows of TestConnectorsEndToEnd for the providers the host knows by
// name (microsoft, google): the operator names only its app registration
// and, for the test, where the fakes listen; the built-in connector
// plugins speak to them by the providers' real host names.

// oauthEnv sets the operator's configuration of OAuth provider name:
// the client registration at as, and the overrides given.
func oauthEnv(t *testing.T, as *oauth.Server, name string, extra map[string]string) {
	t.Helper()
	up := strings.ToUpper(name)
	env := map[string]string{
		"AGENTHOST_OAUTH_PROVIDERS":                name,
		"AGENTHOST_OAUTH_" + up + "_CLIENT_ID":     as.ClientID,
		"AGENTHOST_OAUTH_" + up + "_CLIENT_SECRET": as.ClientSecret,
		"AGENTHOST_OAUTH_" + up + "_REDIRECT_URL":  as.RedirectURI,
		// The provider's identity platform is the fake's.
		"AGENTHOST_OAUTH_" + up + "_AUTH_URL":  as.AuthURL(),
		"AGENTHOST_OAUTH_" + up + "_TOKEN_URL": as.TokenURL(),
	}
	for k, v := range extra {
		env["AGENTHOST_OAUTH_"+up+"_"+k] = v
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// corpusFile reads a file of the repository's corpus.
func corpusFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	graphHost = "graph.microsoft.com"
	spHost    = "contoso.sharepoint.com"
)

// startMicrosoft: the provider "microsoft" with its defaults (hosts,
// scopes) but for the identity platform (fakes/oauth) and Graph's root
// (fakes/graph, reached as graph.microsoft.com on its port). The PDF is in
// the Marketing site's Documents library; Graph answers its content by a
// 302 to the pre-authenticated download URL on contoso.sharepoint.com,
// which the operator resolves and allows as well. The connection is made
// by the OAuth dance as an API client; the summary goes out through
// Outlook.
func startMicrosoft(t *testing.T, base string) *e2eFakes {
	as := oauth.New("ms-e2e-client", "ms-e2e-secret", base+"/api/v1/connections/callback")
	t.Cleanup(as.Close)
	g := graph.New(as.Valid, "alice@contoso.com", "Alice")
	t.Cleanup(g.Close)
	u, _ := url.Parse(g.URL)
	port := u.Port()
	oauthEnv(t, as, "microsoft", map[string]string{"BASE_URL": "http://" + graphHost + ":" + port + "/v1.0"})

	pdf := corpusPDF(t)
	g.AddSite(spHost, "sites/Marketing", "Marketing", "Documents")
	docs := g.Drive(spHost, "sites/Marketing", "Documents")
	g.Put(docs, "Reports/notes.txt", "text/plain", []byte("meeting notes"))
	g.Put(docs, "Reports/camlidl.pdf", "application/pdf", pdf)
	folder := spHost + "/sites/Marketing/Documents/Reports"
	return &e2eFakes{
		args: []string{"-resolve", graphHost + "=127.0.0.1", "-resolve", spHost + "=127.0.0.1",
			"-allow-host", graphHost + ":" + port, "-allow-host", spHost + ":" + port},
		connect: func(t *testing.T, s *e2eServer) string {
			id := oauthConnect(t, s, as, "microsoft")
			// The identity platform then drops the access token (keys
			// rotated): the flow's first Graph call gets 401, and the
			// host refreshes the token once and sends it again.
			as.RevokeAccess()
			return id
		},
		service: "sharepoint", browse: folder, download: folder + "/camlidl.pdf",
		fileName: "camlidl.pdf", mimeType: "application/pdf", text: "camlidl", data: pdf,
		mailService: "outlook",
		sentMail: func() []e2eMail {
			var out []e2eMail
			for _, m := range g.Sent() {
				out = append(out, e2eMail{To: m.To, Subject: m.Subject, Body: m.Body})
			}
			return out
		},
		// The OAuth tokens and the download URLs' tempauth, a credential
		// of its own.
		secrets: func() []string {
			out := as.Issued()
			for _, r := range g.Requests() {
				if q, err := url.ParseQuery(r.Query); err == nil && q.Get("tempauth") != "" {
					out = append(out, q.Get("tempauth"))
				}
			}
			return out
		},
		requests: func() int { return len(g.Requests()) },
		check: func(t *testing.T) {
			// Graph's requests carried the connection's token; the
			// download host got the PDF's request, without it.
			var downloads, stale int
			i := -1 // the request's place in the flow
			for _, r := range g.Requests() {
				if r.Path == "/v1.0/me" && downloads == 0 && i < 0 {
					continue // the check when the connection was made, before the token was dropped
				}
				i++
				switch r.Host {
				case spHost:
					downloads++
					if r.Authorization != "" {
						t.Fatalf("the bearer token followed the redirect to %s", spHost)
					}
				case graphHost:
					tok, ok := strings.CutPrefix(r.Authorization, "Bearer ")
					if !ok || tok == "" {
						t.Fatalf("Graph request without the token: %+v", r)
					}
					if !as.Valid(tok) {
						stale++
						if i != 0 {
							t.Fatalf("request %d carried a dropped token: %+v", i, r)
						}
					}
				default:
					t.Fatalf("a request to %s: %+v", r.Host, r)
				}
			}
			if downloads != 1 || stale != 1 || as.Refreshes() != 1 {
				t.Fatalf("%d requests to the download host (want the PDF's), %d with the dropped token and %d refreshes (want 1 each)", downloads, stale, as.Refreshes())
			}
		},
	}
}

// startGoogle: the provider "google" with its defaults (hosts, scopes)
// but for the identity platform (fakes/oauth) and the API's root, on the
// fake's port (fakes/google serves Drive as www.googleapis.com
// and Gmail as gmail.googleapis.com). Drive's /Finanzen holds the PDF and
// a Google Doc, which is downloaded too (exported to DOCX) once the flow
// ended. The connection is made by the browser's OAuth dance; the summary
// goes out through Gmail.
func startGoogle(t *testing.T, base string) *e2eFakes {
	as := oauth.New("google-e2e-client", "google-e2e-secret", base+"/api/v1/connections/callback")
	t.Cleanup(as.Close)
	gs := google.New(as.Valid, "alice@acme.example")
	t.Cleanup(gs.Close)
	u, _ := url.Parse(gs.URL)
	port := u.Port()
	drive, gmail := "www.googleapis.com:"+port, "gmail.googleapis.com:"+port
	// The default hosts (www. and gmail.googleapis.com) stay: the
	// connector derives Gmail's root from Drive's, port included.
	oauthEnv(t, as, "google", map[string]string{"BASE_URL": "http://" + drive})

	pdf := corpusPDF(t)
	docx := corpusFile(t, "office/docx/textract-raw_text.docx")
	finanzen := gs.AddFolder("Finanzen", "")
	gs.Add(google.File{Name: "Report.pdf", MIMEType: "application/pdf", Parents: []string{finanzen}, Content: pdf})
	plan := gs.Add(google.File{Name: "Plan", MIMEType: google.DocumentType, Parents: []string{finanzen},
		Exports: map[string][]byte{docxType: docx}, Text: "The quarterly plan for the camlidl port."})
	var srv *e2eServer
	var conn string
	return &e2eFakes{
		args: []string{"-resolve", "www.googleapis.com=127.0.0.1", "-resolve", "gmail.googleapis.com=127.0.0.1",
			"-allow-host", drive, "-allow-host", gmail},
		connect: func(t *testing.T, s *e2eServer) string {
			srv, conn = s, oauthConnectBrowser(t, s, as, "google")
			return conn
		},
		service: "drive", browse: "/Finanzen", download: "/Finanzen/Report.pdf",
		fileName: "Report.pdf", mimeType: "application/pdf", text: "camlidl", data: pdf,
		mailService: "gmail",
		sentMail: func() []e2eMail {
			var out []e2eMail
			for _, m := range gs.Sent() {
				out = append(out, gmailReceived(t, m.Raw))
			}
			return out
		},
		secrets:  as.Issued,
		requests: func() int { return len(gs.Requests()) },
		check: func(t *testing.T) {
			for _, r := range gs.Requests() {
				if want := map[bool]string{true: gmail, false: drive}[strings.HasPrefix(r.Path, "/gmail/")]; r.Host != want ||
					!as.Valid(strings.TrimPrefix(r.Authorization, "Bearer ")) {
					t.Fatalf("request %s to %s (want %s) with a valid token: %+v", r.Path, r.Host, want, r)
				}
			}
			// The Google Doc, downloaded with the same connection
			// through the tool API: Drive exports it to DOCX, and the
			// workspace holds those bytes.
			st, body := srv.do(t, "POST", "/workspaces/"+srv.workspace+"/tools/externalDownload",
				map[string]string{"connection": conn, "service": "drive", "path": "/Finanzen/Plan"})
			var res struct {
				OK   bool   `json:"ok"`
				Text string `json:"text"`
			}
			id := ""
			if json.Unmarshal(body, &res) == nil {
				id = fileIDOf(res.Text)
			}
			if st != 200 || !res.OK || !strings.Contains(res.Text, "'Plan.docx'") || id == "" {
				t.Fatalf("download the Google Doc: %d %s", st, body)
			}
			if st, got := srv.do(t, "GET", "/files/"+id+"/content", nil); st != 200 || !bytes.Equal(got, docx) {
				t.Fatalf("the exported Doc: %d, %d bytes, want the export's %d", st, len(got), len(docx))
			}
			var exported bool
			for _, r := range gs.Requests() {
				exported = exported || r.Path == "/drive/v3/files/"+plan+"/export" && strings.Contains(r.Query, url.QueryEscape(docxType))
			}
			if !exported {
				t.Fatal("no export request for the Google Doc")
			}
		},
	}
}

const docxType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

// gmailReceived reads a message Gmail received to send: its To, Subject
// and text body (in the transfer encoding the message names).
func gmailReceived(t *testing.T, raw []byte) e2eMail {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("Gmail got a message that does not parse: %v\n%s", err, raw)
	}
	var out e2eMail
	to, err := m.Header.AddressList("To")
	if err != nil {
		t.Fatalf("To of the sent message: %v", err)
	}
	for _, a := range to {
		out.To = append(out.To, a.Address)
	}
	out.Subject, err = new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	var body io.Reader = m.Body
	if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "base64") {
		body = base64.NewDecoder(base64.StdEncoding, m.Body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("the sent message's body: %v", err)
	}
	out.Body = string(b)
	return out
}

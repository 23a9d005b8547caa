// Package oauth is a test OAuth 2.0 authorisation server speaking RFC 6749
// and RFC 7636 (PKCE S256) on the wire: codes are issued for a challenge,
// the token endpoint checks the client, the verifier and the redirect URI,
// answers errors as {"error", "error_description"} with HTTP 400, and
// refresh tokens rotate. Access tokens can be revoked to provoke a 401.
package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Server is the fake authorisation server.
type Server struct {
	*httptest.Server
	ClientID, ClientSecret, RedirectURI string
	// TTL is the lifetime of issued access tokens (default one hour).
	TTL time.Duration
	// Require are authorisation request parameters the server insists on,
	// as Atlassian's does: audience=api.atlassian.com and prompt=consent
	// ("OAuth 2.0 (3LO) apps", the authorization URL).
	Require map[string]string
	// GoogleOffline makes the server hand out refresh tokens as Google's
	// does: only for access_type=offline, and only on a user's first
	// consent unless the request says prompt=consent ("Using OAuth 2.0 for
	// Web Server Applications", developers.google.com/identity/protocols/oauth2/web-server:
	// "set the prompt parameter to consent to ... always receive a refresh token").
	GoogleOffline bool
	// AdminConsent are scopes an ordinary user may not consent to: a
	// request naming one gets no code, as the Microsoft identity platform
	// answers AADSTS65001/AADSTS90094 "needs admin approval" (the Graph
	// permissions reference marks e.g. ChannelMessage.Read.All delegated
	// "Admin consent required: Yes").
	AdminConsent []string
	// Scopes records the scope parameter of each consent given.
	Scopes []string

	mu        sync.Mutex
	codes     map[string]string // code -> challenge
	noRefresh map[string]bool   // codes whose exchange gives no refresh token
	consented bool              // the user consented before (GoogleOffline)
	access    map[string]bool   // valid access tokens
	refresh   map[string]bool   // valid refresh tokens
	refreshes int
	issued    []string
}

// New starts a server; close it with Close.
func New(clientID, clientSecret, redirectURI string) *Server {
	s := &Server{ClientID: clientID, ClientSecret: clientSecret, RedirectURI: redirectURI, TTL: time.Hour,
		codes: map[string]string{}, noRefresh: map[string]bool{}, access: map[string]bool{}, refresh: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("GET /authorize", s.authorize)
	s.Server = httptest.NewServer(mux)
	return s
}

// AuthURL and TokenURL are the endpoints to configure a client with.
func (s *Server) AuthURL() string  { return s.URL + "/authorize" }
func (s *Server) TokenURL() string { return s.URL + "/token" }

// Consent plays the user approving the authorisation request at authURL:
// it checks the request's PKCE parameters and returns the code the
// redirect would carry ("" if the request is not acceptable).
func (s *Server) Consent(authURL string) string {
	i := strings.Index(authURL, "?")
	if i < 0 {
		return ""
	}
	q, err := url.ParseQuery(authURL[i+1:])
	if err != nil || q.Get("client_id") != s.ClientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("redirect_uri") != s.RedirectURI {
		return ""
	}
	for k, v := range s.Require {
		if q.Get(k) != v {
			return ""
		}
	}
	for _, sc := range strings.Fields(q.Get("scope")) {
		for _, admin := range s.AdminConsent {
			if strings.EqualFold(sc, admin) {
				return ""
			}
		}
	}
	code := random()
	s.mu.Lock()
	s.codes[code] = q.Get("code_challenge")
	s.Scopes = append(s.Scopes, q.Get("scope"))
	if s.GoogleOffline {
		if q.Get("access_type") != "offline" || (s.consented && q.Get("prompt") != "consent") {
			s.noRefresh[code] = true
		}
		s.consented = true
	}
	s.mu.Unlock()
	return code
}

// authorize is the authorisation endpoint a browser is sent to, with a
// user who approves at once (RFC 6749 section 4.1.2): an acceptable request is
// redirected to the redirect URI with a code and the state; a request
// naming another client or redirect URI gets an error page and no
// redirect (section 4.1.2.1), one without PKCE a redirect with
// error=invalid_request.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != s.ClientID || q.Get("redirect_uri") != s.RedirectURI {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	back := url.Values{"state": {q.Get("state")}}
	if code := s.Consent(r.URL.String()); code != "" {
		back.Set("code", code)
	} else {
		back.Set("error", "invalid_request")
		back.Set("error_description", "response_type=code with an S256 code_challenge is required")
	}
	http.Redirect(w, r, s.RedirectURI+"?"+back.Encode(), http.StatusFound)
}

// Valid reports whether an access token is currently accepted.
func (s *Server) Valid(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access[token]
}

// RevokeAccess makes every issued access token invalid (the provider
// rotated keys): the next use gets 401 and needs a refresh.
func (s *Server) RevokeAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access = map[string]bool{}
}

// RevokeRefresh makes every refresh token invalid (the user revoked the grant).
func (s *Server) RevokeRefresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh = map[string]bool{}
}

// Refreshes counts refresh_token grants served.
func (s *Server) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes
}

// Issued lists every token issued (access and refresh), to search leaks for.
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request", "malformed body")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != s.ClientID || secret != s.ClientSecret {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	noRefresh := false
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		challenge, ok := s.codes[r.PostForm.Get("code")]
		noRefresh = s.noRefresh[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		if !ok {
			oauthError(w, "invalid_grant", "unknown or used code")
			return
		}
		if r.PostForm.Get("redirect_uri") != s.RedirectURI {
			oauthError(w, "invalid_grant", "redirect_uri mismatch")
			return
		}
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
			oauthError(w, "invalid_grant", "PKCE verification failed")
			return
		}
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		if !s.refresh[rt] {
			oauthError(w, "invalid_grant", "refresh token revoked")
			return
		}
		delete(s.refresh, rt) // rotation
		s.refreshes++
	default:
		oauthError(w, "unsupported_grant_type", "")
		return
	}
	at, rt := random(), random()
	s.access[at] = true
	s.issued = append(s.issued, at)
	answer := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(s.TTL.Seconds()), "scope": "read write"}
	if !noRefresh {
		s.refresh[rt] = true
		s.issued = append(s.issued, rt)
		answer["refresh_token"] = rt
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(answer)
}

func oauthError(w http.ResponseWriter, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

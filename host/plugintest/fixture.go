// Package plugintest runs a plugin against its fixtures with simulated
// capabilities: `agenthost plugin test DIR` and the test a scaffolded
// plugin carries (plugintest.Test). A fixture is one JSON file of the
// plugin's testdata/ folder: a tool call and what it must answer, or, for
// an extractor, a document and text its extraction must contain; beside
// it, what the simulated capabilities hold for that call (files of an
// in-memory workspace, scripted model replies, recorded HTTP responses
// answered only for the manifest's allowed hosts, a small knowledge index,
// a user's connection for a connector).
//
// The simulations are linked under the real capabilities' names and
// imports (the host's own list with their functions replaced), speak the
// same wire types, and the plugin runs in the real runtime under its
// limits with its code checked against its manifest: what passes here
// fails on a server only where the server's data differ.
package plugintest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Fixture is one case: testdata/NAME.json.
type Fixture struct {
	// Name is the file's name (set by Load).
	Name string `json:"-"`
	// Tool and Args are the call (Args default {}). An extractor's
	// fixtures name Input instead and call "extract".
	Tool string          `json:"tool,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	// Want is what a successful call answers; WantError an error code
	// (invalid_arguments, plugin_error, http_denied, …) or a fragment of
	// the error's message. A fixture sets one of them (or WantText).
	Want      *Want  `json:"want,omitempty"`
	WantError string `json:"wantError,omitempty"`
	// Input is an extractor's document (a file of testdata/), MIMEType
	// its type, and WantText fragments the extracted text must contain.
	Input    string   `json:"input,omitempty"`
	MIMEType string   `json:"mimeType,omitempty"`
	WantText []string `json:"wantText,omitempty"`
	// WantFiles are files the call must have written (capability files),
	// by name, each with a fragment its content must contain.
	WantFiles map[string]string `json:"wantFiles,omitempty"`

	// Files are the workspace's files (capability files), name to text;
	// a file's id is its name, and "docItem:NAME" names it too.
	Files map[string]string `json:"files,omitempty"`
	// Model are the scripted replies of model.complete, in order.
	Model []string `json:"model,omitempty"`
	// HTTP are recorded responses (capability http), served only for
	// URLs the manifest's allowedHosts admit, as on a server.
	HTTP []Recorded `json:"http,omitempty"`
	// Knowledge are documents of the knowledge index (capability
	// knowledge): search finds their paragraphs by words.
	Knowledge []Document `json:"knowledge,omitempty"`
	// Connection is the calling user's connection (capability
	// connection, connector plugins): its requests are answered from HTTP,
	// with the credential attached by the host's own code.
	Connection *Connection `json:"connection,omitempty"`
}

// Connection is a connection of the fixture's user, with a fake
// credential. The host's connection code checks and sends the connector's
// requests with it: the provider must be the connector's, the URL's host
// one of the connector's hosts and the connection's own (BaseURL's or
// Hosts), a read-only tool only GETs; the credential goes in the
// Authorization header and is scrubbed from answers, and a fixture fails
// if it reaches the plugin's result.
type Connection struct {
	// ID is what the call's arguments name (default "conn-1").
	ID       string `json:"id,omitempty"`
	Provider string `json:"provider"`
	Label    string `json:"label,omitempty"`
	// Auth is token (Bearer), basic (Account and Token) or oauth2 (Token
	// is the access token the provider's token endpoint grants).
	Auth    string `json:"auth,omitempty"`
	Token   string `json:"token"`
	Account string `json:"account,omitempty"`
	// BaseURL is the connection's site; Hosts the provider's configured
	// API hosts (as AGENTHOST_OAUTH_<NAME>_HOSTS).
	BaseURL string   `json:"baseUrl,omitempty"`
	Hosts   []string `json:"hosts,omitempty"`
}

// Want is a successful result: exact text, JSON data, or fragments.
type Want struct {
	Text     *string         `json:"text,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Contains []string        `json:"contains,omitempty"`
}

// Recorded is one recorded HTTP response, answered to METHOD URL.
type Recorded struct {
	Method  string            `json:"method,omitempty"` // default GET
	URL     string            `json:"url"`
	Status  int               `json:"status,omitempty"` // default 200
	Headers map[string]string `json:"headers,omitempty"`
	// Body is a JSON string (sent as its text) or any JSON value (sent as
	// JSON).
	Body json.RawMessage `json:"body,omitempty"`
	// WantHeaders are headers the request must carry (the credential a
	// connection attaches: "Authorization": "Bearer …"); a request without
	// them is answered 401 and fails the fixture.
	WantHeaders map[string]string `json:"wantHeaders,omitempty"`
}

// Document is one document of the simulated knowledge index.
type Document struct {
	File string `json:"file"`
	Text string `json:"text"`
}

// Load reads every fixture of dir/testdata (*.json), in name order.
func Load(dir string) ([]Fixture, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "testdata", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Fixture
	var errs []error
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f, err := parseFixture(filepath.Base(p), b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

func parseFixture(name string, b []byte) (Fixture, error) {
	var f Fixture
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("fixture %s: %w", name, err)
	}
	f.Name = name
	expects := 0
	for _, set := range []bool{f.Want != nil, f.WantError != "", len(f.WantText) > 0} {
		if set {
			expects++
		}
	}
	switch {
	case f.Tool == "" && f.Input == "":
		return f, fmt.Errorf("fixture %s: names neither a tool nor an input document", name)
	case expects == 0:
		return f, fmt.Errorf("fixture %s: says nothing it expects (want, wantError or wantText)", name)
	case expects > 1:
		return f, fmt.Errorf("fixture %s: want, wantError and wantText exclude each other", name)
	case f.Input != "" && (filepath.IsAbs(f.Input) || strings.Contains(filepath.ToSlash(f.Input), "..")):
		return f, fmt.Errorf("fixture %s: input %q must lie in testdata/", name, f.Input)
	}
	if len(f.Args) > 0 && !json.Valid(f.Args) {
		return f, fmt.Errorf("fixture %s: args are not JSON", name)
	}
	for i, r := range f.HTTP {
		if r.URL == "" {
			return f, fmt.Errorf("fixture %s: http[%d] has no url", name, i)
		}
	}
	if c := f.Connection; c != nil {
		if c.ID == "" {
			c.ID = "conn-1"
		}
		if c.Auth == "" {
			c.Auth = "token"
		}
		if c.Label == "" {
			c.Label = c.Provider
		}
		switch {
		case c.Provider == "":
			return f, fmt.Errorf("fixture %s: the connection names no provider", name)
		case len(c.Token) < 4:
			return f, fmt.Errorf("fixture %s: the connection needs a fake credential, token, of 4 characters or more", name)
		case c.Auth != "token" && c.Auth != "basic" && c.Auth != "oauth2":
			return f, fmt.Errorf("fixture %s: the connection's auth %q is not token, basic or oauth2", name, c.Auth)
		case c.Auth == "basic" && c.Account == "":
			return f, fmt.Errorf("fixture %s: a basic connection needs an account", name)
		case c.BaseURL == "" && len(c.Hosts) == 0:
			return f, fmt.Errorf("fixture %s: the connection needs a baseUrl or the provider's hosts", name)
		}
	}
	return f, nil
}

package plugintest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
	"github.com/agenthost/agenthost/pdk/knowledge/wire"
)

// world is what the simulated capabilities hold for one fixture's call.
type world struct {
	mu      sync.Mutex
	files   map[string][]byte
	written []string
	replies []string
	asked   int
	http    []Recorded
	docs    []Document
	// allowed are the egress rules of the plugin (read-only [0], writing [1]).
	allowed [2]*egress.Client
	// conn is the fixture's connection (nil without one).
	conn *connectionWorld
	// problems are what the simulation saw go wrong beyond the call's
	// answer (a request without the headers a recording wants).
	problems []string
}

func (w *world) fail(why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.problems = append(w.problems, why)
}

type worldKey struct{}

func worldFrom(ctx context.Context) (*world, error) {
	w, _ := ctx.Value(worldKey{}).(*world)
	if w == nil {
		return nil, &wasm.CapabilityError{Code: "unavailable", Message: "plugin test: no fixture world"}
	}
	return w, nil
}

func newWorld(ctx context.Context, f Fixture, m *manifest.Manifest) (*world, error) {
	w := &world{files: map[string][]byte{}, replies: f.Model, http: f.HTTP, docs: f.Knowledge}
	for name, text := range f.Files {
		w.files[name] = []byte(text)
	}
	// The same rules as the server's egress client for this plugin: its
	// allowed hosts, and GET/HEAD only for read-only tools.
	pol := egress.NewPolicy().WithAllowedHosts(m.Limits.AllowedHosts...)
	w.allowed[0] = egress.NewClient(pol.WithMethods(http.MethodGet, http.MethodHead))
	w.allowed[1] = egress.NewClient(pol)
	if f.Connection != nil {
		cw, err := newConnectionWorld(ctx, w, f.Connection)
		if err != nil {
			return nil, err
		}
		w.conn = cw
	}
	return w, nil
}

// capabilities are the host's own capabilities (their names, imports and
// signatures), with files, model, knowledge, http and connection served by the
// simulation; the others (images, background, …) answer as on a host
// without those services: unavailable.
func capabilities() []wasm.Capability {
	caps := builtin.NewCapabilities().List(wasm.EgressOptions{})
	for i, c := range caps {
		fns := make([]wasm.HostFunction, len(c.Functions))
		for j, f := range c.Functions {
			fns[j] = f
			if h := simulated(c.Name, f); h != nil {
				fns[j].Func = h
			}
		}
		caps[i].Functions = fns
	}
	return caps
}

type jsonHandler = func(ctx context.Context, c *wasm.Call, req json.RawMessage) (any, error)

// simulated returns the simulation of one host function, nil to keep the
// host's own.
func simulated(capability string, f wasm.HostFunction) func(context.Context, *wasm.Call, []uint64) {
	var h jsonHandler
	switch capability + "." + f.Name {
	case "http.http_request":
		return httpRequest
	case "connection.request", "connection.info":
		return connectionFunction(f)
	case "files.read":
		h = filesRead
	case "files.write":
		h = filesWrite
	case "model.info":
		h = modelInfo
	case "model.count":
		h = modelCount
	case "model.complete":
		h = modelComplete
	case "knowledge.search":
		h = knowledgeSearch
	default:
		if capability == "knowledge" {
			h = notSimulated(capability + "." + f.Name)
		}
	}
	if h == nil {
		return nil
	}
	return wasm.JSONFunction(f.Module, f.Name, f.Write, h).Func
}

func notSimulated(name string) jsonHandler {
	return func(context.Context, *wasm.Call, json.RawMessage) (any, error) {
		return nil, &wasm.CapabilityError{Code: "not_simulated", Message: name + " is not simulated by plugin test; try it on a server"}
	}
}

func invalid(format string, a ...any) error {
	return &wasm.CapabilityError{Code: "invalid_request", Message: fmt.Sprintf(format, a...)}
}

// files: an in-memory workspace whose file ids are the files' names.

func (w *world) lookup(ref string) (string, []byte, error) {
	name := strings.TrimPrefix(strings.TrimSpace(ref), "docItem:")
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.files[name]
	if !ok {
		return "", nil, &wasm.CapabilityError{Code: "not_found", Message: fmt.Sprintf("file %q is not in this workspace", ref)}
	}
	return name, b, nil
}

func filesRead(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	w, err := worldFrom(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		File     string `json:"file"`
		MaxBytes int64  `json:"maxBytes"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, invalid("read: %v", err)
	}
	if r.MaxBytes < 0 {
		return nil, invalid("maxBytes must not be negative")
	}
	name, b, err := w.lookup(r.File)
	if err != nil {
		return nil, err
	}
	data := b
	if limit := min(files.DefaultMaxRead, r.MaxBytes); r.MaxBytes > 0 && int64(len(data)) > limit {
		data = data[:limit]
	}
	return files.ReadResult{FileID: name, Name: name, MIMEType: mimeOf(name), Size: int64(len(b)),
		Data: base64.StdEncoding.EncodeToString(data), Truncated: len(data) < len(b)}, nil
}

func filesWrite(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	w, err := worldFrom(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		Name     string `json:"name"`
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, invalid("write: %v", err)
	}
	if strings.TrimSpace(r.Name) == "" {
		return nil, invalid("write: name is empty")
	}
	data, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return nil, invalid("data is not base64: %v", err)
	}
	w.mu.Lock()
	w.files[r.Name] = data
	w.written = append(w.written, r.Name)
	w.mu.Unlock()
	mt := r.MIMEType
	if mt == "" {
		mt = mimeOf(r.Name)
	}
	return files.WriteResult{FileID: r.Name, DocItem: "docItem:" + r.Name, Name: r.Name, MIMEType: mt, Size: int64(len(data))}, nil
}

func mimeOf(name string) string {
	switch {
	case strings.HasSuffix(name, ".md"):
		return "text/markdown"
	case strings.HasSuffix(name, ".json"):
		return "application/json"
	case strings.HasSuffix(name, ".csv"):
		return "text/csv"
	}
	return "text/plain"
}

// model: scripted replies, in order.

func modelInfo(ctx context.Context, _ *wasm.Call, _ json.RawMessage) (any, error) {
	return llm.ModelInfoResult{Model: "scripted", ContextTokens: 128000, MaxOutputTokens: llm.DefaultMaxOutputTokens}, nil
}

func modelCount(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	var r struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(req, &r); err != nil || r.Text == nil {
		return nil, invalid("count wants {\"text\": \"...\"}")
	}
	return struct {
		Tokens int `json:"tokens"`
	}{(len(*r.Text) + 3) / 4}, nil
}

func modelComplete(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	w, err := worldFrom(ctx)
	if err != nil {
		return nil, err
	}
	var r struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, invalid("complete: %v", err)
	}
	if len(r.Messages) == 0 {
		return nil, invalid("complete needs at least one message")
	}
	prompt := 0
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return nil, invalid("messages[%d].role %q (want system, user or assistant)", i, m.Role)
		}
		prompt += (len(m.Content) + 3) / 4
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.asked >= len(w.replies) {
		return nil, &wasm.CapabilityError{Code: "unavailable", Message: fmt.Sprintf("the fixture scripts %d model replies, and this is call %d (add one to \"model\")", len(w.replies), w.asked+1)}
	}
	reply := w.replies[w.asked]
	w.asked++
	return llm.CompleteResult{Content: reply, FinishReason: "stop", PromptTokens: prompt, CompletionTokens: (len(reply) + 3) / 4, Model: "scripted"}, nil
}

// knowledge: paragraphs of the fixture's documents, found by words.

func knowledgeSearch(ctx context.Context, _ *wasm.Call, req json.RawMessage) (any, error) {
	w, err := worldFrom(ctx)
	if err != nil {
		return nil, err
	}
	var r wire.SearchRequest
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, invalid("search: %v", err)
	}
	terms := words(r.Query)
	if len(terms) == 0 {
		return nil, invalid("search: the query has no words")
	}
	limit := r.Limit
	if limit <= 0 {
		limit = 10
	}
	var hits []wire.Hit
	for _, d := range w.docs {
		for i, para := range strings.Split(d.Text, "\n\n") {
			para = strings.TrimSpace(para)
			score := 0.0
			have := map[string]bool{}
			for _, t := range words(para) {
				have[t] = true
			}
			for _, t := range terms {
				if have[t] {
					score++
				}
			}
			if score == 0 {
				continue
			}
			hits = append(hits, wire.Hit{Chunk: wire.Chunk{ID: fmt.Sprintf("%s#%d", d.File, i+1), Seq: i, ObjectID: fmt.Sprintf("para-%d", i+1),
				ContentType: "text", Text: para, Tokens: (len(para) + 3) / 4},
				FileID: d.File, FileName: d.File, WorkspaceID: "plugin-test", Score: score / float64(len(terms)), Match: "words"})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return wire.SearchResponse{Hits: append([]wire.Hit{}, hits...)}, nil
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// http: recorded responses, for the hosts the manifest allows.

func httpRequest(ctx context.Context, c *wasm.Call, s []uint64) {
	reqJSON, err := c.Read(s[0])
	if err != nil {
		panic(c.Fail(wasm.CodeTrap, "http_request: %v", err))
	}
	c.Free(s[0])
	if s[1] != 0 {
		if _, err := c.Read(s[1]); err != nil {
			panic(c.Fail(wasm.CodeTrap, "http_request: %v", err))
		}
		c.Free(s[1])
	}
	var r struct {
		URL     string            `json:"url"`
		Method  string            `json:"method"`
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(reqJSON, &r); err != nil {
		panic(c.Fail(wasm.CodeHTTPFailed, "http_request: invalid request document: %v", err))
	}
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	w, err := worldFrom(ctx)
	if err != nil {
		panic(c.Fail(wasm.CodeHTTPFailed, "%v", err))
	}
	i := 1
	if c.ReadOnly {
		i = 0
	}
	if err := w.allowed[i].CheckURL(method, r.URL); err != nil {
		code := wasm.CodeHTTPFailed
		var denied *egress.DeniedError
		if errors.As(err, &denied) {
			code = wasm.CodeHTTPDenied
		}
		panic(c.Fail(code, "plugin %s, tool %s: %v", c.Plugin, c.Tool, err))
	}
	rec := w.recorded(method, r.URL)
	if rec == nil {
		panic(c.Fail(wasm.CodeHTTPFailed, "plugin test: no recorded response for %s %s (add one to the fixture's \"http\")", method, r.URL))
	}
	status, h, body := rec.response()
	if why := rec.missingHeaders(r.Headers); why != "" {
		w.fail(fmt.Sprintf("%s %s: %s", method, r.URL, why))
		status, h, body = http.StatusUnauthorized, http.Header{}, nil
	}
	c.SetHTTPResponse(status, h)
	off, err := c.Write(body)
	if err != nil {
		panic(c.Fail(wasm.CodeOutOfMemory, "http_request: %v", err))
	}
	s[0] = off
}

// recorded finds the recording answering method url (nil if none).
func (w *world) recorded(method, url string) *Recorded {
	for k := range w.http {
		m := strings.ToUpper(w.http[k].Method)
		if m == "" {
			m = http.MethodGet
		}
		if m == method && w.http[k].URL == url {
			return &w.http[k]
		}
	}
	return nil
}

// response is the recording's status, headers and body.
func (rec *Recorded) response() (int, http.Header, []byte) {
	body := []byte(rec.Body)
	var text string
	if json.Unmarshal(rec.Body, &text) == nil {
		body = []byte(text)
	}
	status := rec.Status
	if status == 0 {
		status = http.StatusOK
	}
	h := http.Header{}
	for k, v := range rec.Headers {
		h.Set(k, v)
	}
	return status, h, bytes.Clone(body)
}

// missingHeaders says which of the headers the recording wants the
// request lacks ("" if none).
func (rec *Recorded) missingHeaders(got map[string]string) string {
	have := http.Header{}
	for k, v := range got {
		have.Set(k, v)
	}
	var whys []string
	for k, v := range rec.WantHeaders {
		if g := have.Get(k); g != v {
			whys = append(whys, fmt.Sprintf("the provider saw %s %q, want %q", http.CanonicalHeaderKey(k), g, v))
		}
	}
	sort.Strings(whys)
	return strings.Join(whys, "; ")
}

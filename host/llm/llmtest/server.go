// Package llmtest is a scripted OpenAI-compatible HTTP server for tests and
// demos. It speaks the real wire format over real HTTP, so the code under
// test runs its actual client: chat completions (plain JSON and SSE streams
// with a role delta, content split over several chunks, tool calls streamed
// as argument fragments by index, a final usage chunk and data: [DONE]),
// embeddings, transcriptions, speech and image generation.
//
// Chat replies follow a script of Steps, served in order; a default step
// (often a Decide func) answers when the script is empty. Errors, Retry-After,
// delays, slow and cut streams are steps too. Every request is recorded,
// decoded, for assertions. A Server is safe for any number of concurrent
// clients.
package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// Server is a running scripted provider. Create it with New (tests) or
// Start (demos).
type Server struct {
	srv     *httptest.Server
	opts    options
	closing chan struct{}
	once    sync.Once
	seq     atomic.Int64

	mu       sync.Mutex
	scripts  map[Endpoint][]Step
	defaults map[Endpoint]Step
	requests []Request
}

type options struct {
	dim        int
	noTools    map[string]bool
	apiKey     string
	chunk      int
	transcript string
	noUsage    bool
	defaults   map[Endpoint]Step
	flavor     Flavor
	windows    map[string]int // model → enforced context window
}

// Option configures a Server.
type Option func(*options)

// WithEmbeddingDimension sets the vector length of /v1/embeddings (default
// 16) when the request does not ask for one.
func WithEmbeddingDimension(n int) Option { return func(o *options) { o.dim = n } }

// WithNoFunctionCalling marks models that do not support tools: a chat
// request that offers tools to one of them gets a 400, as real servers
// answer, so callers must use a text protocol with them.
func WithNoFunctionCalling(models ...string) Option {
	return func(o *options) {
		for _, m := range models {
			o.noTools[m] = true
		}
	}
}

// WithAPIKey makes the server require "Authorization: Bearer key" (401
// otherwise).
func WithAPIKey(key string) Option { return func(o *options) { o.apiKey = key } }

// WithChunkSize sets how many characters of content or of tool-call
// arguments go into one streamed chunk (default 6).
func WithChunkSize(n int) Option { return func(o *options) { o.chunk = max(1, n) } }

// WithTranscript sets the text /v1/audio/transcriptions returns when no step
// says otherwise (default "hello from llmtest").
func WithTranscript(text string) Option { return func(o *options) { o.transcript = text } }

// WithoutUsage makes every reply leave out usage, like servers that report
// none.
func WithoutUsage() Option { return func(o *options) { o.noUsage = true } }

// WithDefault sets the step served for chat when the script is empty.
// Without one, a request beyond the script gets a 400 that says so.
func WithDefault(step Step) Option { return func(o *options) { o.defaults[EndpointChat] = step } }

// New starts a server for a test; it is closed by t.Cleanup.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := Start(opts...)
	t.Cleanup(s.Close)
	return s
}

// Start starts a server outside a test (demos, benchmarks); Close it.
func Start(opts ...Option) *Server {
	o := options{dim: 16, chunk: 6, transcript: "hello from llmtest", noTools: map[string]bool{}, defaults: map[Endpoint]Step{},
		windows: map[string]int{}}
	for _, f := range opts {
		f(&o)
	}
	s := &Server{opts: o, closing: make(chan struct{}), scripts: map[Endpoint][]Step{}, defaults: o.defaults}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+string(EndpointChat), s.handleChat)
	mux.HandleFunc("POST "+string(EndpointEmbeddings), s.handleEmbeddings)
	mux.HandleFunc("POST "+string(EndpointTranscriptions), s.handleTranscriptions)
	mux.HandleFunc("POST "+string(EndpointSpeech), s.handleSpeech)
	mux.HandleFunc("POST "+string(EndpointImages), s.handleImages)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, Fail(http.StatusNotFound, "Invalid URL ("+r.Method+" "+r.URL.Path+")"))
	})
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the base URL a client is configured with (it ends in /v1).
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close stops the server; waiting steps end at once.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Script appends steps to the chat script.
func (s *Server) Script(steps ...Step) { s.ScriptEndpoint(EndpointChat, steps...) }

// ScriptEndpoint appends steps to the script of endpoint e. Endpoints other
// than chat answer by default when their script is empty (hash vectors, the
// default transcript, generated audio), so their scripts usually hold only
// errors and delays.
func (s *Server) ScriptEndpoint(e Endpoint, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[e] = append(s.scripts[e], steps...)
}

// SetDefault sets the step endpoint e serves when its script is empty.
func (s *Server) SetDefault(e Endpoint, step Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaults[e] = step
}

// Pending returns how many scripted steps of endpoint e are still unserved.
func (s *Server) Pending(e Endpoint) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.scripts[e])
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ChatRequests returns the decoded chat requests received so far.
func (s *Server) ChatRequests() []ChatRequest {
	var out []ChatRequest
	for _, r := range s.Requests() {
		if r.Chat != nil {
			out = append(out, *r.Chat)
		}
	}
	return out
}

// next pops endpoint e's next step: scripted, else default. ok is false when
// there is neither.
func (s *Server) next(e Endpoint) (Step, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.scripts[e]; len(q) > 0 {
		s.scripts[e] = q[1:]
		return q[0], true
	}
	st, ok := s.defaults[e]
	return st, ok
}

// record stores r and returns a function that sets its status.
func (s *Server) record(r Request) func(int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := len(s.requests)
	s.requests = append(s.requests, r)
	return func(status int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests[i].Status = status
	}
}

// wait sleeps d unless the client leaves or the server closes first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.apiKey == "" || r.Header.Get("Authorization") == "Bearer "+s.opts.apiKey {
		return true
	}
	s.writeError(w, Fail(http.StatusUnauthorized, "Incorrect API key provided."))
	return false
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, err := decodeChat(body)
	if err != nil {
		s.writeError(w, Fail(http.StatusBadRequest, err.Error()))
		return
	}
	n := s.seq.Add(1)
	setStatus := s.record(Request{Endpoint: EndpointChat, Header: r.Header.Clone(), Chat: &req})
	if len(req.Tools) > 0 && s.opts.noTools[req.Model] {
		st := Fail(http.StatusBadRequest, req.Model+" does not support tools")
		st.ErrorCode = "unsupported_parameter"
		setStatus(s.writeError(w, withParam(st, "tools")))
		return
	}
	for i, t := range req.Tools {
		// OpenAI refuses a function name outside this pattern (a dot, say).
		if !functionName.MatchString(t.Name) {
			st := Fail(http.StatusBadRequest, fmt.Sprintf("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.", i))
			st.ErrorCode = "invalid_value"
			setStatus(s.writeError(w, withParam(st, fmt.Sprintf("tools[%d].function.name", i))))
			return
		}
	}
	if st, over := s.overWindow(req); over {
		// Refused before any generation: no script step is used.
		setStatus(s.writeError(w, st))
		return
	}
	step, ok := s.next(EndpointChat)
	if !ok {
		st := Fail(http.StatusBadRequest, fmt.Sprintf("llmtest: the chat script is exhausted (request %d, model %s) and no default step is set", n, req.Model))
		st.ErrorCode = "llmtest_script_exhausted"
		setStatus(s.writeError(w, st))
		return
	}
	if step.Func != nil {
		step = step.Func(req)
	}
	if !s.wait(r, step.Delay) {
		setStatus(499)
		return
	}
	if step.Status >= 400 {
		setStatus(s.writeError(w, step))
		return
	}
	reply := s.buildReply(n, req, step)
	if !req.Stream {
		writeJSON(w, http.StatusOK, reply)
		setStatus(http.StatusOK)
		return
	}
	setStatus(s.stream(w, r, req, step, reply))
}

// functionName is the pattern OpenAI holds a function's name to.
var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// buildReply makes the whole completion; streaming slices it into chunks.
func (s *Server) buildReply(n int64, req ChatRequest, step Step) wireCompletion {
	msg := &wireOutMessage{Role: "assistant"}
	if step.Content != "" || len(step.ToolCalls) == 0 {
		msg.Content = &step.Content
	}
	for i, tc := range step.ToolCalls {
		wc := wireToolCall{ID: tc.ID, Type: "function"}
		if wc.ID == "" {
			wc.ID = fmt.Sprintf("call_%d_%d", n, i)
		}
		wc.Function.Name, wc.Function.Arguments = tc.Name, tc.Arguments
		msg.ToolCalls = append(msg.ToolCalls, wc)
	}
	finish := step.FinishReason
	if finish == "" {
		finish = "stop"
		if len(step.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	c := wireCompletion{
		ID: fmt.Sprintf("chatcmpl-llmtest-%d", n), Object: "chat.completion", Created: time.Now().Unix(),
		Model: req.Model, SystemFingerprint: "fp_llmtest",
		Choices: []wireChoice{{Index: 0, Message: msg, FinishReason: &finish}},
	}
	if !step.NoUsage && !s.opts.noUsage {
		u := step.Usage
		if u == nil {
			u = estimateUsage(req, step)
		}
		c.Usage = u
	}
	return c
}

// stream writes reply as OpenAI does: a role delta, content in several
// chunks, each tool call as a header chunk (id, name) and argument
// fragments, a finish chunk, the usage chunk if asked for, then [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req ChatRequest, step Step, reply wireCompletion) int {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	usageNull := json.RawMessage(nil)
	if req.IncludeUsage {
		usageNull = json.RawMessage("null")
	}
	sent := 0
	emit := func(choices []wireChoice, usage json.RawMessage) bool {
		if step.CutAfter > 0 && sent >= step.CutAfter {
			// Abort the response: the client sees the connection end
			// mid-body, as with a crashed upstream.
			panic(http.ErrAbortHandler)
		}
		if sent > 0 && !s.wait(r, step.ChunkDelay) {
			return false
		}
		if choices == nil {
			choices = []wireChoice{}
		}
		b, _ := json.Marshal(wireChunk{ID: reply.ID, Object: "chat.completion.chunk", Created: reply.Created,
			Model: reply.Model, SystemFingerprint: reply.SystemFingerprint, Choices: choices, Usage: usage})
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		sent++
		return rc.Flush() == nil
	}
	delta := func(d wireDelta) []wireChoice { return []wireChoice{{Index: 0, Delta: &d}} }
	empty := ""
	if !emit(delta(wireDelta{Role: "assistant", Content: &empty}), usageNull) {
		return 499
	}
	msg := reply.Choices[0].Message
	if msg.Content != nil {
		for _, part := range split(*msg.Content, s.opts.chunk) {
			if !emit(delta(wireDelta{Content: &part}), usageNull) {
				return 499
			}
		}
	}
	for i, tc := range msg.ToolCalls {
		head := wireToolCall{Index: &i, ID: tc.ID, Type: "function"}
		head.Function.Name = tc.Function.Name
		if !emit(delta(wireDelta{ToolCalls: []wireToolCall{head}}), usageNull) {
			return 499
		}
		for _, frag := range split(tc.Function.Arguments, s.opts.chunk) {
			piece := wireToolCall{Index: &i}
			piece.Function.Arguments = frag
			if !emit(delta(wireDelta{ToolCalls: []wireToolCall{piece}}), usageNull) {
				return 499
			}
		}
	}
	if !emit([]wireChoice{{Index: 0, Delta: &wireDelta{}, FinishReason: reply.Choices[0].FinishReason}}, usageNull) {
		return 499
	}
	if req.IncludeUsage && reply.Usage != nil {
		u, _ := json.Marshal(reply.Usage)
		if !emit(nil, u) {
			return 499
		}
	}
	if _, err := io.WriteString(w, "data: [DONE]\n\n"); err != nil {
		return 499
	}
	_ = rc.Flush()
	return http.StatusOK
}

// split cuts s into pieces of n characters (runes), never splitting one.
func split(s string, n int) []string {
	var out []string
	for s != "" {
		i, k := 0, 0
		for i < len(s) && k < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			k++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// estimateTokens is the server's stand-in for a tokenizer: about four bytes
// per token, at least one for non-empty text.
func estimateTokens(s string) int {
	if s == "" {
		return 0
	}
	return (len(s) + 3) / 4
}

func estimateUsage(req ChatRequest, step Step) *Usage {
	p := 3
	for _, m := range req.Messages {
		p += 4 + estimateTokens(m.Content)
		for _, tc := range m.ToolCalls {
			p += 3 + estimateTokens(tc.Name) + estimateTokens(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		p += 7 + estimateTokens(t.Name) + estimateTokens(t.Description) + estimateTokens(string(t.Parameters))
	}
	c := estimateTokens(step.Content)
	for _, tc := range step.ToolCalls {
		c += 3 + estimateTokens(tc.Name) + estimateTokens(tc.Arguments)
	}
	c = max(c, 1)
	return &Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c}
}

func withParam(s Step, param string) Step {
	s.ErrorType = "invalid_request_error"
	s.ErrorCode = cmpOr(s.ErrorCode, "invalid_value")
	s.ErrorParam = param
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// writeOpenAIError writes an OpenAI error body for an error step and
// returns the status.
func writeOpenAIError(w http.ResponseWriter, s Step) int {
	if d := s.RetryAfter; d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
		if d%time.Second != 0 {
			w.Header().Set("retry-after-ms", strconv.FormatInt(d.Milliseconds(), 10))
		}
	}
	w.Header().Set("x-request-id", "req_llmtest")
	var e wireError
	e.Error.Message, e.Error.Type = s.ErrorMessage, s.ErrorType
	if s.ErrorCode != "" {
		e.Error.Code = &s.ErrorCode
	}
	if s.ErrorParam != "" {
		e.Error.Param = &s.ErrorParam
	}
	writeJSON(w, s.Status, e)
	return s.Status
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serveSimple handles the script of a non-chat endpoint: it returns the
// step to answer with, or false after answering itself (error, client gone).
func (s *Server) serveSimple(w http.ResponseWriter, r *http.Request, e Endpoint, setStatus func(int)) (Step, bool) {
	step, _ := s.next(e)
	if !s.wait(r, step.Delay) {
		setStatus(499)
		return step, false
	}
	if step.Status >= 400 {
		setStatus(s.writeError(w, step))
		return step, false
	}
	return step, true
}

func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var body struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		s.writeError(w, Fail(http.StatusBadRequest, "We could not parse the JSON body of your request."))
		return
	}
	var inputs []string
	var one string
	if err := json.Unmarshal(body.Input, &one); err == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(body.Input, &inputs); err != nil {
		s.writeError(w, withParam(Fail(http.StatusBadRequest, "'input' must be a string or an array of strings"), "input"))
		return
	}
	req := EmbeddingRequest{Model: body.Model, Input: inputs, Dimensions: body.Dimensions, EncodingFormat: body.EncodingFormat}
	setStatus := s.record(Request{Endpoint: EndpointEmbeddings, Header: r.Header.Clone(), Embedding: &req})
	if body.Model == "" || len(inputs) == 0 {
		setStatus(s.writeError(w, Fail(http.StatusBadRequest, "'model' and a non-empty 'input' are required")))
		return
	}
	for i, in := range inputs {
		if in == "" {
			setStatus(s.writeError(w, withParam(Fail(http.StatusBadRequest, fmt.Sprintf("'$.input[%d]' is invalid: empty string", i)), "input")))
			return
		}
	}
	step, ok := s.serveSimple(w, r, EndpointEmbeddings, setStatus)
	if !ok {
		return
	}
	dim := s.opts.dim
	if body.Dimensions > 0 {
		dim = body.Dimensions
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
		Usage  *struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage,omitempty"`
	}{Object: "list", Model: body.Model}
	tokens := 0
	for i, in := range inputs {
		v := Vector(in, dim)
		tokens += estimateTokens(in)
		var emb any = v
		if body.EncodingFormat == "base64" {
			buf := make([]byte, 4*len(v))
			for j, f := range v {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(buf)
		}
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: emb})
	}
	if !step.NoUsage && !s.opts.noUsage {
		out.Usage = &struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		}{tokens, tokens}
	}
	writeJSON(w, http.StatusOK, out)
	setStatus(http.StatusOK)
}

// Vector is the embedding the server returns for text: feature hashing of
// its lower-cased words (each word adds ±1 to a dimension chosen by its
// SHA-256), normalised to length 1. It is deterministic, and texts that
// share words have a positive cosine similarity, which is enough for
// retrieval tests. Text without words hashes as a whole.
func Vector(text string, dim int) []float32 {
	v := make([]float64, dim)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		words = []string{text}
	}
	for _, w := range words {
		h := sha256.Sum256([]byte(w))
		i := binary.LittleEndian.Uint64(h[:8]) % uint64(dim)
		if h[8]&1 == 0 {
			v[i]++
		} else {
			v[i]--
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dim)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

func (s *Server) handleTranscriptions(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		s.writeError(w, Fail(http.StatusBadRequest, "expected a multipart/form-data body: "+err.Error()))
		return
	}
	req := TranscriptionRequest{Model: r.FormValue("model"), ResponseFormat: r.FormValue("response_format"),
		Language: r.FormValue("language"), Prompt: r.FormValue("prompt")}
	if f, h, err := r.FormFile("file"); err == nil {
		req.Audio, _ = io.ReadAll(f)
		req.Filename, req.ContentType = h.Filename, h.Header.Get("Content-Type")
		f.Close()
	}
	setStatus := s.record(Request{Endpoint: EndpointTranscriptions, Header: r.Header.Clone(), Transcription: &req})
	if req.Model == "" || len(req.Audio) == 0 {
		setStatus(s.writeError(w, Fail(http.StatusBadRequest, "'model' and 'file' are required")))
		return
	}
	step, ok := s.serveSimple(w, r, EndpointTranscriptions, setStatus)
	if !ok {
		return
	}
	text := cmpOr(step.Transcript, s.opts.transcript)
	seconds := AudioSeconds(req.Audio)
	switch req.ResponseFormat {
	case "", "json":
		writeJSON(w, http.StatusOK, map[string]any{"text": text})
	case "verbose_json":
		writeJSON(w, http.StatusOK, map[string]any{
			"task": "transcribe", "language": cmpOr(req.Language, "english"), "duration": seconds, "text": text,
			"segments": []map[string]any{{"id": 0, "seek": 0, "start": 0.0, "end": seconds, "text": text}},
		})
	case "text", "srt", "vtt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, text+"\n")
	default:
		setStatus(s.writeError(w, withParam(Fail(http.StatusBadRequest, "unsupported response_format "+req.ResponseFormat), "response_format")))
		return
	}
	setStatus(http.StatusOK)
}

// AudioSeconds is the length the server reports for audio: exact for PCM
// WAV, otherwise one second per 32,000 bytes (16 kHz, 16-bit mono).
func AudioSeconds(audio []byte) float64 {
	if len(audio) >= 44 && string(audio[:4]) == "RIFF" && string(audio[8:12]) == "WAVE" {
		var rate uint32
		for p := 12; p+8 <= len(audio); {
			id, size := string(audio[p:p+4]), int(binary.LittleEndian.Uint32(audio[p+4:p+8]))
			switch id {
			case "fmt ":
				if p+20 <= len(audio) {
					rate = binary.LittleEndian.Uint32(audio[p+16 : p+20])
				}
			case "data":
				if rate > 0 {
					return float64(min(size, len(audio)-p-8)) / float64(rate)
				}
			}
			p += 8 + size + size&1
		}
	}
	return float64(len(audio)) / 32000
}

// speechTypes maps response formats to the Content-Type OpenAI sends.
var speechTypes = map[string]string{
	"mp3": "audio/mpeg", "opus": "audio/ogg", "aac": "audio/aac",
	"flac": "audio/flac", "wav": "audio/wav", "pcm": "audio/pcm",
}

func (s *Server) handleSpeech(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var req SpeechRequest
	var body struct {
		Model          string  `json:"model"`
		Input          string  `json:"input"`
		Voice          string  `json:"voice"`
		ResponseFormat string  `json:"response_format"`
		Speed          float64 `json:"speed"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		s.writeError(w, Fail(http.StatusBadRequest, "We could not parse the JSON body of your request."))
		return
	}
	req = SpeechRequest(body)
	setStatus := s.record(Request{Endpoint: EndpointSpeech, Header: r.Header.Clone(), Speech: &req})
	format := cmpOr(req.ResponseFormat, "mp3")
	ctype, known := speechTypes[format]
	switch {
	case req.Model == "" || req.Input == "":
		setStatus(s.writeError(w, Fail(http.StatusBadRequest, "'model' and 'input' are required")))
		return
	case req.Voice == "":
		setStatus(s.writeError(w, withParam(Fail(http.StatusBadRequest, "'voice' is required"), "voice")))
		return
	case !known:
		setStatus(s.writeError(w, withParam(Fail(http.StatusBadRequest, "unsupported response_format "+format), "response_format")))
		return
	}
	step, ok := s.serveSimple(w, r, EndpointSpeech, setStatus)
	if !ok {
		return
	}
	audio := step.Audio
	if audio == nil {
		audio = fakeAudio(format, req.Input)
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(audio)
	setStatus(http.StatusOK)
}

// fakeAudio is deterministic audio-looking bytes for text: a valid silent
// WAV (50 ms per character, 8 kHz) for wav, else the format's magic bytes
// followed by a hash of the text.
func fakeAudio(format, text string) []byte {
	if format == "wav" {
		samples := 400 * utf8.RuneCountInString(text)
		var b bytes.Buffer
		le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
		b.WriteString("RIFF")
		le(uint32(36 + 2*samples))
		b.WriteString("WAVEfmt ")
		le(uint32(16))
		le(uint16(1))     // PCM
		le(uint16(1))     // mono
		le(uint32(8000))  // sample rate
		le(uint32(16000)) // byte rate
		le(uint16(2))     // block align
		le(uint16(16))    // bits per sample
		b.WriteString("data")
		le(uint32(2 * samples))
		b.Write(make([]byte, 2*samples))
		return b.Bytes()
	}
	magic := map[string]string{"mp3": "ID3\x04\x00\x00", "opus": "OggS", "flac": "fLaC", "aac": "\xff\xf1"}[format]
	h := sha256.Sum256([]byte(text))
	return append([]byte(magic), h[:]...)
}

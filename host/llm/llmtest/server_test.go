package llmtest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

func post(t *testing.T, url, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const chatBody = `{"model":"m","stream":%v%s,"messages":[{"role":"user","content":"hi"}],
	"tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}}]}`

// The stream has OpenAI's shape, chunk by chunk.
func TestStreamWireFormat(t *testing.T) {
	s := llmtest.New(t)
	s.Script(llmtest.Step{Content: "Hello, world!", ToolCalls: []llmtest.ToolCall{
		llmtest.Call("read_file", `{"path":"a.txt"}`), {ID: "call_x", Name: "read_file", Arguments: `{"path":"b.txt"}`}}})
	resp := post(t, s.URL()+"/chat/completions", fmt.Sprintf(chatBody, true, `,"stream_options":{"include_usage":true}`))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	type chunk struct {
		Object  string `json:"object"`
		Choices []struct {
			Delta struct {
				Role      *string `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					Index    *int    `json:"index"`
					ID       *string `json:"id"`
					Type     *string `json:"type"`
					Function struct {
						Name      *string `json:"name"`
						Arguments *string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	var chunks []chunk
	var last string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not an SSE data line", line)
		}
		last = data
		if data == "[DONE]" {
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	if last != "[DONE]" {
		t.Fatalf("stream ends with %q", last)
	}
	first := chunks[0].Choices[0].Delta
	if first.Role == nil || *first.Role != "assistant" {
		t.Error("first chunk is not the role delta")
	}
	var text strings.Builder
	textChunks := 0
	args := map[int]string{}
	heads := map[int]string{}
	for i, c := range chunks {
		if c.Object != "chat.completion.chunk" {
			t.Errorf("chunk %d object %q", i, c.Object)
		}
		if i < len(chunks)-1 && string(c.Usage) != "null" {
			t.Errorf("chunk %d usage %s, want null before the usage chunk", i, c.Usage)
		}
		for _, ch := range c.Choices {
			if d := ch.Delta.Content; d != nil && *d != "" {
				text.WriteString(*d)
				textChunks++
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == nil {
					t.Fatalf("chunk %d: tool call without index", i)
				}
				if tc.ID != nil {
					if tc.Type == nil || *tc.Type != "function" || tc.Function.Name == nil || tc.Function.Arguments == nil || *tc.Function.Arguments != "" {
						t.Errorf("chunk %d: tool call head %+v", i, tc)
					}
					heads[*tc.Index] = *tc.ID + " " + *tc.Function.Name
				} else if tc.Function.Name != nil {
					t.Errorf("chunk %d: name repeated in a fragment", i)
				}
				if tc.Function.Arguments != nil {
					args[*tc.Index] += *tc.Function.Arguments
				}
			}
		}
	}
	if text.String() != "Hello, world!" || textChunks < 2 {
		t.Errorf("text %q in %d chunks", text.String(), textChunks)
	}
	if args[0] != `{"path":"a.txt"}` || args[1] != `{"path":"b.txt"}` || heads[1] != "call_x read_file" || !strings.HasPrefix(heads[0], "call_") {
		t.Errorf("tool calls %v %v", heads, args)
	}
	fin := chunks[len(chunks)-2]
	if len(fin.Choices) != 1 || fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish chunk %+v", fin)
	}
	usage := chunks[len(chunks)-1]
	var u llmtest.Usage
	if len(usage.Choices) != 0 || json.Unmarshal(usage.Usage, &u) != nil || u.PromptTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage chunk %+v", usage)
	}
	r := s.ChatRequests()[0]
	if !r.Stream || !r.IncludeUsage || !r.HasTool("read_file") || r.LastUser() != "hi" {
		t.Errorf("recorded %+v", r)
	}
}

func TestNonStreamedReply(t *testing.T) {
	s := llmtest.New(t)
	s.Script(llmtest.CallTools(llmtest.Call("read_file", `{"path":"a"}`)).WithUsage(10, 5))
	resp := post(t, s.URL()+"/chat/completions", fmt.Sprintf(chatBody, false, ""))
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			Message      map[string]json.RawMessage `json:"message"`
			FinishReason string                     `json:"finish_reason"`
		} `json:"choices"`
		Usage llmtest.Usage `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	m := out.Choices[0].Message
	if out.Object != "chat.completion" || string(m["content"]) != "null" || string(m["role"]) != `"assistant"` ||
		out.Choices[0].FinishReason != "tool_calls" || out.Usage != (llmtest.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}) {
		t.Errorf("reply %+v", out)
	}
	var calls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct{ Name, Arguments string }
	}
	if err := json.Unmarshal(m["tool_calls"], &calls); err != nil || len(calls) != 1 || calls[0].Type != "function" || calls[0].Function.Arguments != `{"path":"a"}` {
		t.Errorf("tool_calls %s", m["tool_calls"])
	}
}

func TestErrorsAndRefusals(t *testing.T) {
	tests := []struct {
		name       string
		opts       []llmtest.Option
		script     []llmtest.Step
		body       string
		header     []string
		wantStatus int
		wantCode   string
		wantParam  string
		wantHeader map[string]string
	}{
		{name: "rate limit with Retry-After", script: []llmtest.Step{llmtest.RateLimited(1500 * time.Millisecond)},
			wantStatus: 429, wantCode: "rate_limit_exceeded", wantHeader: map[string]string{"Retry-After": "2", "retry-after-ms": "1500"}},
		{name: "whole seconds send no ms header", script: []llmtest.Step{llmtest.RateLimited(3 * time.Second)},
			wantStatus: 429, wantHeader: map[string]string{"Retry-After": "3", "retry-after-ms": ""}},
		{name: "server error", script: []llmtest.Step{llmtest.Fail(500, "")}, wantStatus: 500},
		{name: "tools to a model without function calling", opts: []llmtest.Option{llmtest.WithNoFunctionCalling("m")},
			script: []llmtest.Step{llmtest.Reply("unused")}, wantStatus: 400, wantParam: "tools"},
		{name: "script exhausted", wantStatus: 400, wantCode: "llmtest_script_exhausted"},
		{name: "missing key", opts: []llmtest.Option{llmtest.WithAPIKey("k")}, wantStatus: 401, wantCode: "invalid_api_key"},
		{name: "malformed body", body: `{"model":`, script: []llmtest.Step{llmtest.Reply("unused")}, wantStatus: 400},
		{name: "tool message without its call id", body: `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, wantStatus: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.New(t, tc.opts...)
			s.Script(tc.script...)
			body := tc.body
			if body == "" {
				body = fmt.Sprintf(chatBody, false, "")
			}
			resp := post(t, s.URL()+"/chat/completions", body, tc.header...)
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Code    *string `json:"code"`
					Param   *string `json:"param"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantStatus || e.Error.Message == "" || e.Error.Type == "" {
				t.Errorf("status %d, error %+v", resp.StatusCode, e.Error)
			}
			if tc.wantCode != "" && (e.Error.Code == nil || *e.Error.Code != tc.wantCode) {
				t.Errorf("code %v, want %s", e.Error.Code, tc.wantCode)
			}
			if tc.wantParam != "" && (e.Error.Param == nil || *e.Error.Param != tc.wantParam) {
				t.Errorf("param %v, want %s", e.Error.Param, tc.wantParam)
			}
			for k, v := range tc.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// Decide answers by content: a tool call when tools are offered, then an
// answer from the tool's result.
func TestDecide(t *testing.T) {
	s := llmtest.New(t, llmtest.WithDefault(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		if res := r.ToolResults(); len(res) > 0 {
			return llmtest.Reply("The file says: " + res[0].Content)
		}
		if r.HasTool("read_file") {
			return llmtest.CallTools(llmtest.Call("read_file", `{"path":"a"}`))
		}
		return llmtest.Reply("no tools")
	})))
	resp := post(t, s.URL()+"/chat/completions", fmt.Sprintf(chatBody, false, ""))
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"read_file"`) {
		t.Errorf("first reply %s", b)
	}
	// Content as an array of parts is accepted and joined.
	resp = post(t, s.URL()+"/chat/completions", `{"model":"m","messages":[
		{"role":"user","content":[{"type":"text","text":"read "},{"type":"text","text":"a"}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"42"}]}`)
	b, _ = io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "The file says: 42") {
		t.Errorf("second reply %s", b)
	}
	r := s.ChatRequests()[1]
	if r.Messages[0].Content != "read a" || r.Messages[1].ToolCalls[0].ID != "c1" || r.LastMessage().ToolCallID != "c1" {
		t.Errorf("recorded %+v", r.Messages)
	}
}

// A delayed step ends when the client leaves, and the request says so.
func TestDelayEndsWhenClientLeaves(t *testing.T) {
	s := llmtest.New(t)
	s.Script(llmtest.Reply("late").WithDelay(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(fmt.Sprintf(chatBody, false, "")))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("no time-out")
	}
	deadline := time.Now().Add(2 * time.Second)
	for s.Requests()[0].Status != 499 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.Requests()[0].Status; st != 499 {
		t.Errorf("status %d", st)
	}
}

func TestConcurrentClients(t *testing.T) {
	s := llmtest.New(t, llmtest.WithChunkSize(1000), llmtest.WithDefault(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		return llmtest.Reply("re: " + r.LastUser())
	})))
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"m","stream":%v,"messages":[{"role":"user","content":"n%d"}]}`, i%2 == 0, i)
			resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if !strings.Contains(string(b), fmt.Sprintf(`"re: n%d"`, i)) {
				t.Errorf("request %d got %s", i, b)
			}
		})
	}
	wg.Wait()
	if n := len(s.ChatRequests()); n != 100 {
		t.Errorf("recorded %d requests", n)
	}
}

func TestEmbeddingsEndpoint(t *testing.T) {
	s := llmtest.New(t, llmtest.WithEmbeddingDimension(32))
	resp := post(t, s.URL()+"/embeddings", `{"model":"e","input":["invoice due in 30 days","the invoice is due","weather in Bern"]}`)
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Data) != 3 || len(out.Data[0].Embedding) != 32 || out.Usage.PromptTokens == 0 {
		t.Fatalf("reply %+v", out)
	}
	cos := func(a, b []float32) float64 {
		var d float64
		for i := range a {
			d += float64(a[i]) * float64(b[i])
		}
		return d
	}
	v := out.Data
	if cos(v[0].Embedding, v[1].Embedding) <= cos(v[0].Embedding, v[2].Embedding) || math.Abs(cos(v[0].Embedding, v[0].Embedding)-1) > 1e-5 {
		t.Errorf("texts sharing words should be closer: %v vs %v", cos(v[0].Embedding, v[1].Embedding), cos(v[0].Embedding, v[2].Embedding))
	}
	// base64 encoding and a single string input.
	resp = post(t, s.URL()+"/embeddings", `{"model":"e","input":"weather in Bern","dimensions":4,"encoding_format":"base64"}`)
	var b64 struct {
		Data []struct{ Embedding string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&b64); err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(b64.Data[0].Embedding)
	want := llmtest.Vector("weather in Bern", 4)
	for i := range want {
		if math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])) != want[i] {
			t.Fatalf("base64 vector differs at %d", i)
		}
	}
}

func TestAudioEndpoints(t *testing.T) {
	s := llmtest.New(t, llmtest.WithTranscript("hallo"))
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "a.mp3")
	fw.Write(make([]byte, 64000))
	mw.WriteField("model", "whisper-1")
	mw.WriteField("response_format", "verbose_json")
	mw.Close()
	resp, err := http.Post(s.URL()+"/audio/transcriptions", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		Text     string  `json:"text"`
		Duration float64 `json:"duration"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || tr.Text != "hallo" || tr.Duration != 2 {
		t.Errorf("transcription %+v, %v", tr, err)
	}
	if r := s.Requests()[0].Transcription; r.Filename != "a.mp3" || len(r.Audio) != 64000 {
		t.Errorf("recorded %+v", r)
	}

	sp := post(t, s.URL()+"/audio/speech", `{"model":"tts-1","input":"hi","voice":"alloy","response_format":"opus"}`)
	audio, _ := io.ReadAll(sp.Body)
	if sp.Header.Get("Content-Type") != "audio/ogg" || !bytes.HasPrefix(audio, []byte("OggS")) {
		t.Errorf("speech %s %q", sp.Header.Get("Content-Type"), audio[:4])
	}
	if bad := post(t, s.URL()+"/audio/speech", `{"model":"tts-1","input":"hi"}`); bad.StatusCode != 400 {
		t.Errorf("speech without a voice: %d", bad.StatusCode)
	}
}

package api_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// TestVoiceRoutes: recorded audio becomes text and text becomes audio
// through the scripted OpenAI-compatible server's real audio endpoints;
// bad input is refused clearly, and another workspace is not found.
func TestVoiceRoutes(t *testing.T) {
	ts := server(t, func(o *serverOptions) {
		o.llmOpts = append(o.llmOpts, llmtest.WithTranscript("what does the manual say"))
	})
	do := func(method, path, ctype string, body []byte) (int, string, string) {
		req, _ := http.NewRequest(method, ts.base+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+ts.alice)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	// A real (silent) WAV: a RIFF header and 0.1 s of 8 kHz mono samples.
	wav := append([]byte("RIFF\x24\x03\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x03\x00\x00"), make([]byte, 768)...)
	ws := "/workspaces/" + ts.wsA + "/voice/"
	status, _, body := do("POST", ws+"transcribe", "audio/wav", wav)
	if status != 200 || !strings.Contains(body, `"text":"what does the manual say"`) {
		t.Fatalf("transcribe: %d %s", status, body)
	}
	status, ctype, body := do("POST", ws+"synthesize", "application/json", []byte(`{"text":"The manual describes interfaces."}`))
	if status != 200 || !strings.HasPrefix(ctype, "audio/") || len(body) < 16 {
		t.Fatalf("synthesize: %d %s (%d bytes)", status, ctype, len(body))
	}
	reqs := ts.model.Requests()
	if len(reqs) < 2 {
		t.Fatalf("the model server saw %d requests", len(reqs))
	}
	cases := []struct {
		name, path, ctype, body string
		want                    int
	}{
		{"no audio", ws + "transcribe", "audio/wav", "", 400},
		{"no text", ws + "synthesize", "application/json", `{"text":"  "}`, 400},
		{"unknown field", ws + "synthesize", "application/json", `{"text":"x","speed":2}`, 400},
		{"too much text", ws + "synthesize", "application/json", `{"text":"` + strings.Repeat("a", 4097) + `"}`, 400},
		{"another workspace", "/workspaces/nope/voice/synthesize", "application/json", `{"text":"x"}`, 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if status, _, body := do("POST", tc.path, tc.ctype, []byte(tc.body)); status != tc.want {
				t.Fatalf("%d (want %d): %s", status, tc.want, body)
			}
		})
	}
}

package llmtest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"testing"

	"github.com/agenthost/agenthost/host/llm/llmtest"
)

func TestImages(t *testing.T) {
	srv := llmtest.New(t)
	url := srv.URL() + "/images/generations"
	tests := []struct {
		name, body string
		status     int
		w, h, n    int
		usage      bool
	}{
		{"dall-e in base64", `{"model":"dall-e-3","prompt":"a cat","size":"64x32","response_format":"b64_json"}`, 200, 64, 32, 1, false},
		{"gpt-image answers in base64 with usage", `{"model":"gpt-image-1","prompt":"a cat","size":"32x32","n":2}`, 200, 32, 32, 2, true},
		{"gpt-image refuses response_format", `{"model":"gpt-image-1","prompt":"a cat","response_format":"b64_json"}`, 400, 0, 0, 0, false},
		{"no prompt", `{"model":"dall-e-3"}`, 400, 0, 0, 0, false},
		{"a bad size", `{"model":"dall-e-3","prompt":"x","size":"big"}`, 400, 0, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(tc.body)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			}
			if tc.status != 200 {
				return
			}
			var out struct {
				Data []struct {
					B64JSON string `json:"b64_json"`
				} `json:"data"`
				Usage *struct {
					OutputTokens int `json:"output_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Data) != tc.n || (out.Usage != nil) != tc.usage {
				t.Fatalf("%s", raw)
			}
			b, _ := base64.StdEncoding.DecodeString(out.Data[0].B64JSON)
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if img.Bounds().Dx() != tc.w || img.Bounds().Dy() != tc.h {
				t.Fatalf("image %v", img.Bounds())
			}
		})
	}
	if got := len(srv.Requests()); got != len(tests) {
		t.Fatalf("%d requests recorded", got)
	}
}

package llmtest

import (
	"encoding/base64"
	"strings"
	"testing"
)

// A minimal PNG and JPEG signature: http.DetectContentType sniffs the
// first bytes, as OpenAI's endpoint checks the data is the type declared.
var (
	pngBytes  = append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 16)...)
	jpegBytes = append([]byte("\xff\xd8\xff\xe0"), make([]byte, 16)...)
)

func TestDecodeImageParts(t *testing.T) {
	url := func(mime string, b []byte) string {
		return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
	}
	part := func(u string) string { return `{"type":"image_url","image_url":{"url":"` + u + `"}}` }
	body := func(role, content string) string {
		return `{"model":"m","messages":[{"role":"` + role + `","content":` + content + `}]}`
	}
	tests := []struct {
		name, body string
		images     int
		err        string
	}{
		{"text and an image", body("user", `[{"type":"text","text":"read"},`+part(url("image/png", pngBytes))+`]`), 1, ""},
		{"two images", body("user", `[`+part(url("image/png", pngBytes))+`,`+part(url("image/jpeg", jpegBytes))+`]`), 2, ""},
		{"an image from the system", body("system", `[`+part(url("image/png", pngBytes))+`]`), 0, "only allowed for messages with role 'user'"},
		{"a URL to fetch", body("user", `[`+part("https://example.com/a.png")+`]`), 0, "only data: URLs"},
		{"bad base64", body("user", `[`+part("data:image/png;base64,@@@")+`]`), 0, "invalid base64"},
		{"a type not taken", body("user", `[`+part(url("image/tiff", pngBytes))+`]`), 0, "invalid MIME type"},
		{"bytes of another type", body("user", `[`+part(url("image/jpeg", pngBytes))+`]`), 0, "unsupported image"},
		{"an unknown part", body("user", `[{"type":"input_audio"}]`), 0, "is not one of"},
		{"no url", body("user", `[{"type":"image_url","image_url":{}}]`), 0, "image_url.url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := decodeChat([]byte(tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(r.LastMessage().Images); got != tc.images {
				t.Fatalf("%d images, want %d", got, tc.images)
			}
		})
	}
}

package llm_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/worldtest"
)

// pngPage is a small real PNG (a grey page with a dark bar).
func pngPage(t *testing.T) []byte {
	t.Helper()
	im := image.NewGray(image.Rect(0, 0, 64, 32))
	for i := range im.Pix {
		im.Pix[i] = 0xf0
	}
	for x := 8; x < 56; x++ {
		im.SetGray(x, 16, color.Gray{0})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, im); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func ocrReq(images ...map[string]any) string {
	b, _ := json.Marshal(map[string]any{"images": images})
	return string(b)
}

// TestModelCapabilityOCR: model.ocr sends the image as an image_url part
// with a data: URL (OpenAI's wire format, which the scripted server
// decodes), to the OCR chain's model only, and bills the call in CHF to the
// caller with the purpose tool:<tool>/ocr.
func TestModelCapabilityOCR(t *testing.T) {
	w := worldtest.New(t, worldtest.Options{Workflow: "w", Model: &worldtest.Model{
		Models: map[modeluse.Operation][]llm.ModelConfig{
			modeluse.OpAgent: {{Model: "text-only", InputCHFPer1M: 1, OutputCHFPer1M: 1}},
			modeluse.OpOCR:   {{Model: "vision-model", InputCHFPer1M: 150, OutputCHFPer1M: 600}},
		},
		Retry: fastRetry, Timeout: 10 * time.Second,
	}})
	e := capEnv{db: w.DB, srv: w.Server, wf: w.Workflows, cap: &llm.Capabilities{Client: w.Client, Workflows: w.Workflows}, p: w.P, ws: w.Workspace, workflow: w.Workflow}
	page := pngPage(t)
	e.srv.Script(llmtest.Decide(func(r llmtest.ChatRequest) llmtest.Step {
		m := r.LastMessage()
		if len(m.Images) != 1 || !bytes.Equal(m.Images[0].Data, page) || m.Images[0].MIMEType != "image/png" {
			return llmtest.Fail(400, "the scripted page did not arrive")
		}
		return llmtest.Reply("Invoice 4711").WithUsage(900, 4)
	}))
	out, err := llm.CapCall(e.cap, e.ctx(), "ocr", "ocrPage", ocrReq(map[string]any{"mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(page)}))
	if err != nil {
		t.Fatal(err)
	}
	res := out.(llm.OCRResult)
	if res.Text != "Invoice 4711" || res.Model != "vision-model" || res.CostCHF <= 0 {
		t.Fatalf("result %+v", res)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 1 || reqs[0].Model != "vision-model" {
		t.Fatalf("requests %+v", reqs)
	}
	if raw := string(reqs[0].Raw); !strings.Contains(raw, `"type":"image_url"`) || !strings.Contains(raw, `"url":"data:image/png;base64,`) {
		t.Fatalf("not OpenAI's image wire format: %.300s", raw)
	}
	if p := e.purposes(t); len(p) != 1 || p[0] != "tool:ocrPage/ocr" {
		t.Fatalf("usage purposes %v", p)
	}
}

func TestModelCapabilityOCRRefusals(t *testing.T) {
	e := newCapEnv(t) // no OCR chain
	page := base64.StdEncoding.EncodeToString(pngPage(t))
	withOCR, err := llm.New(llm.Config{Providers: []llm.ProviderConfig{{Name: "test", BaseURL: e.srv.URL()}},
		Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpOCR: {{Provider: "test", Model: "vision-model", Free: true}}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ocr := &llm.Capabilities{Client: withOCR}
	tests := []struct {
		name      string
		cap       *llm.Capabilities
		ctx       context.Context
		req       string
		code      string
		inMessage string
	}{
		{"no caller", ocr, context.Background(), ocrReq(map[string]any{"mimeType": "image/png", "data": page}), "no_caller", ""},
		// The summary and agent chains are not used for images.
		{"no OCR chain", e.cap, e.ctx(), ocrReq(map[string]any{"mimeType": "image/png", "data": page}), "no_model", "AGENTHOST_MODEL_OCR"},
		{"no image", ocr, e.ctx(), `{"images":[]}`, "invalid_request", "1 to 8"},
		{"a type vision endpoints refuse", ocr, e.ctx(), ocrReq(map[string]any{"mimeType": "image/tiff", "data": page}), "invalid_request", "mimeType"},
		{"bytes that are not the type declared", ocr, e.ctx(), ocrReq(map[string]any{"mimeType": "image/jpeg", "data": page}), "invalid_request", "declared image/jpeg"},
		{"a bad detail", ocr, e.ctx(), ocrReq(map[string]any{"mimeType": "image/png", "data": page, "detail": "ultra"}), "invalid_request", "detail"},
		{"too many images", ocr, e.ctx(), ocrReq(func() []map[string]any {
			var l []map[string]any
			for range 9 {
				l = append(l, map[string]any{"mimeType": "image/png", "data": page})
			}
			return l
		}()...), "invalid_request", "1 to 8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := llm.CapCall(tc.cap, tc.ctx, "ocr", "ocrPage", tc.req)
			if code(err) != tc.code || !strings.Contains(err.Error(), tc.inMessage) {
				t.Fatalf("err = %v, want code %s mentioning %q", err, tc.code, tc.inMessage)
			}
		})
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the provider", n)
	}
}

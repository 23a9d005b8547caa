package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/wasm"
)

// Limits of one model.ocr call. OpenAI's vision guide allows up to 50 MB of
// images per request; a page scan re-encoded as PNG or JPEG is well under
// a few MB, so one call takes at most a few page images.
const (
	MaxOCRImages     = 8
	MaxOCRImageBytes = 20 << 20
	maxOCRTotalBytes = 48 << 20
)

// DefaultOCRPrompt asks a vision model for a page's text alone.
const DefaultOCRPrompt = "Transcribe all text in this scanned page exactly as written, in reading order. " +
	"Keep line breaks between paragraphs. Do not describe the image, do not add anything, do not translate. " +
	"If the page holds no text, answer with nothing."

// OCRResult is model.ocr's answer: the text the OCR model read and what it
// cost.
type OCRResult struct {
	Text             string       `json:"text"`
	FinishReason     string       `json:"finishReason"`
	PromptTokens     int          `json:"promptTokens"`
	CompletionTokens int          `json:"completionTokens"`
	CostCHF          money.Amount `json:"costCHF"`
	Model            string       `json:"model"`
}

// ocr is model.ocr: {"images":[{"mimeType","data"(base64)}], "prompt",
// "maxTokens", "purpose"} read by the OCR chain's vision model (OpOCR),
// with the same caller, budget and billing as complete. Without an OCR
// model it fails with code "no_model" and says how to configure one.
func (h *Capabilities) ocr(ctx context.Context, call *wasm.Call, req json.RawMessage) (any, error) {
	c, m, err := h.caller(ctx, modeluse.OpOCR)
	if err != nil {
		return nil, err
	}
	var r struct {
		Images []struct {
			MIMEType string `json:"mimeType"`
			Data     []byte `json:"data"` // base64 in JSON
			Detail   string `json:"detail"`
		} `json:"images"`
		Prompt    string `json:"prompt"`
		MaxTokens int    `json:"maxTokens"`
		Purpose   string `json:"purpose"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, invalid("ocr: " + err.Error())
	}
	if len(r.Images) == 0 || len(r.Images) > MaxOCRImages {
		return nil, invalid(fmt.Sprintf("ocr takes 1 to %d images, not %d", MaxOCRImages, len(r.Images)))
	}
	msg := Message{Role: RoleUser, Content: strings.TrimSpace(r.Prompt)}
	if msg.Content == "" {
		msg.Content = DefaultOCRPrompt
	}
	total := 0
	for i, im := range r.Images {
		if len(im.Data) == 0 || len(im.Data) > MaxOCRImageBytes {
			return nil, invalid(fmt.Sprintf("images[%d] has %d bytes (want 1 to %d)", i, len(im.Data), MaxOCRImageBytes))
		}
		total += len(im.Data)
		// The declared type must be one vision endpoints take, and the
		// bytes must be of it: a guest's label is not trusted.
		switch im.MIMEType {
		case "image/png", "image/jpeg", "image/webp", "image/gif":
		default:
			return nil, invalid(fmt.Sprintf("images[%d].mimeType %q (want image/png, image/jpeg, image/webp or image/gif)", i, im.MIMEType))
		}
		if got := http.DetectContentType(im.Data); got != im.MIMEType {
			return nil, invalid(fmt.Sprintf("images[%d] is declared %s but its bytes are %s", i, im.MIMEType, got))
		}
		switch im.Detail {
		case "", "low", "high", "auto":
		default:
			return nil, invalid(fmt.Sprintf("images[%d].detail %q (want low, high or auto)", i, im.Detail))
		}
		msg.Images = append(msg.Images, ImageInput{MIMEType: im.MIMEType, Data: im.Data, Detail: im.Detail})
	}
	if total > maxOCRTotalBytes {
		return nil, invalid(fmt.Sprintf("the images take %d bytes, more than the %d one call may send", total, maxOCRTotalBytes))
	}
	limit := maxOutput(m)
	if r.MaxTokens < 0 || r.MaxTokens > limit {
		return nil, invalid(fmt.Sprintf("maxTokens %d (want 1 to %d for %s)", r.MaxTokens, limit, m.Name))
	}
	if r.MaxTokens == 0 {
		r.MaxTokens = limit
	}
	if err := h.checkBudget(ctx, c); err != nil {
		return nil, err
	}
	purpose := "tool:" + call.Tool + "/ocr"
	if p := strings.TrimSpace(r.Purpose); p != "" {
		purpose = "tool:" + call.Tool + "/" + clipPurpose(p)
	}
	actx := WithAttribution(ctx, Attribution{TenantID: c.Principal.TenantID, WorkspaceID: c.WorkspaceID,
		UserID: c.Principal.UserID, WorkflowID: c.WorkflowID, Purpose: purpose})
	zero := float32(0)
	resp, err := h.Client.Chat(actx, ChatRequest{Operation: modeluse.OpOCR, Messages: []Message{msg}, MaxTokens: r.MaxTokens, Temperature: &zero}, nil)
	h.account(ctx, c, resp.Usage)
	if err != nil {
		return nil, modelError(err)
	}
	return OCRResult{Text: resp.Message.Content, FinishReason: resp.FinishReason, PromptTokens: resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens, CostCHF: resp.Usage.Cost, Model: resp.Usage.Model}, nil
}

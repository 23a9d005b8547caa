package extract

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/wasm"
)

// The tools of the PDF plugin that OCR uses.
const (
	OCRPageTool  = "ocrPage"
	OCRImageTool = "ocrImage"
)

// OCRText is what the OCR tools answer.
type OCRText struct {
	Text     string       `json:"text"`
	Sent     string       `json:"sent"`
	MIMEType string       `json:"mimeType"`
	Width    int          `json:"width"`
	Height   int          `json:"height"`
	Bytes    int          `json:"bytes"`
	CostCHF  money.Amount `json:"costCHF"`
	Model    string       `json:"model"`
}

// OCRPage runs the PDF extractor's ocrPage tool.
func (e *Set) OCRPage(ctx context.Context, name, mimeType string, in wasm.Input, page int) (OCRText, error) {
	p, _, err := e.pick(name, mimeType, OCRPageTool)
	if err != nil {
		return OCRText{}, err
	}
	if !p.HasTool(OCRPageTool) {
		return OCRText{}, fmt.Errorf("%w with OCR: %s (%s): %s has no %s tool", ErrNoExtractor, mimeType, name, p.Name(), OCRPageTool)
	}
	args, _ := json.Marshal(map[string]int{"page": page})
	return e.ocrCall(ctx, p, OCRPageTool, args, in)
}

// OCRImage runs ocrImage of the image's chosen extractor if it has one,
// else of a built-in plugin that has; page is the page of a multi-page
// TIFF (1 for any other image).
func (e *Set) OCRImage(ctx context.Context, name, mimeType string, in wasm.Input, page int) (OCRText, error) {
	p, _, err := e.pick(name, mimeType, OCRImageTool)
	if err != nil || !p.HasTool(OCRImageTool) {
		p = nil
		for _, q := range e.plugins.Plugins() {
			if q.Builtin() && q.HasTool(OCRImageTool) {
				p = q
				break
			}
		}
	}
	if p == nil {
		return OCRText{}, fmt.Errorf("%w with OCR: no loaded plugin has the %s tool", ErrNoExtractor, OCRImageTool)
	}
	a := map[string]any{"name": name, "mimeType": mimeType}
	if page > 1 {
		a["page"] = page
	}
	args, _ := json.Marshal(a)
	return e.ocrCall(ctx, p, OCRImageTool, args, in)
}

func (e *Set) ocrCall(ctx context.Context, p *wasm.Plugin, tool string, args []byte, in wasm.Input) (OCRText, error) {
	r := e.call(ctx, p, tool, args, &wasm.CallOptions{Input: in})
	if !r.OK {
		return OCRText{}, fmt.Errorf("extractor %s: %s: %w", p.Name(), tool, r.Error)
	}
	var out OCRText
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return OCRText{}, fmt.Errorf("extractor %s: %s result: %w", p.Name(), tool, err)
	}
	return out, nil
}

package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/knowledge/wire"
)

// PDF is the MIME type smart extraction applies to.
const PDF = "application/pdf"

// The tools of the PDF extractor plugin that on-demand reading uses.
const (
	PrescanTool   = "prescan"
	ReadPagesTool = "readPages"
)

// ErrNoPrescan: the document's extractor has no pre-scan (an extractor
// the operator chose instead of the built-in one); ingestion extracts the
// document whole instead.
var ErrNoPrescan = fmt.Errorf("%w with a pre-scan", ErrNoExtractor)

// Prescan runs the document extractor's prescan tool.
func (e *Set) Prescan(ctx context.Context, name, mimeType string, in wasm.Input) (content.Index, error) {
	p, _, err := e.pick(name, mimeType, PrescanTool)
	if err != nil {
		return content.Index{}, err
	}
	if !p.HasTool(PrescanTool) {
		return content.Index{}, fmt.Errorf("%w: %s (%s): %s has no %s tool", ErrNoPrescan, mimeType, name, p.Name(), PrescanTool)
	}
	args, _ := json.Marshal(map[string]string{"name": name, "mimeType": mimeType})
	r := e.call(ctx, p, PrescanTool, args, &wasm.CallOptions{Input: in})
	if !r.OK {
		return content.Index{}, fmt.Errorf("extractor %s: %w", p.Name(), r.Error)
	}
	var out extractResult
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return content.Index{}, fmt.Errorf("extractor %s: pre-scan result is not an index: %w", p.Name(), err)
	}
	return out.Index, nil
}

// ReadPages runs the document extractor's readPages tool.
func (e *Set) ReadPages(ctx context.Context, name, mimeType string, in wasm.Input, from, to int, sections []wire.Section) ([]content.Object, error) {
	p, _, err := e.pick(name, mimeType, ReadPagesTool)
	if err != nil {
		return nil, err
	}
	if !p.HasTool(ReadPagesTool) {
		return nil, fmt.Errorf("%w reading pages: %s (%s): %s has no %s tool", ErrNoExtractor, mimeType, name, p.Name(), ReadPagesTool)
	}
	args, _ := json.Marshal(struct {
		From     int            `json:"from"`
		To       int            `json:"to"`
		Sections []wire.Section `json:"sections,omitempty"`
	}{from, to, sections})
	r := e.call(ctx, p, ReadPagesTool, args, &wasm.CallOptions{Input: in})
	if !r.OK {
		return nil, fmt.Errorf("extractor %s: pages %d-%d: %w", p.Name(), from, to, r.Error)
	}
	var out extractResult
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return nil, fmt.Errorf("extractor %s: pages result is not objects: %w", p.Name(), err)
	}
	return out.Objects, nil
}

func IsPDF(f filemeta.Item) bool {
	m, _, _ := strings.Cut(f.MIMEType, ";")
	return strings.EqualFold(strings.TrimSpace(m), PDF) || strings.EqualFold(PathExt(f.Name), ".pdf")
}

func PathExt(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i:]
	}
	return ""
}

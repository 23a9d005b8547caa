package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// ExtractTool is the tool every extractor plugin offers: arguments
// {"name","mimeType"}, the document through the input capability, and as
// structured result {"index": content.Index, "objects": [content.Object]}.
const ExtractTool = "extract"

// ErrNoExtractor: no loaded plugin extracts this type.
var ErrNoExtractor = errors.New("no extractor for this type")

// Plugins is what extraction needs of the plugin runtime.
type Plugins interface {
	Plugins() []*wasm.Plugin
}

// Extractors picks the extractor plugin for a document by the MIME types
// and extensions their manifests declare, and runs it sandboxed.
type Extractors struct{ plugins Plugins }

// NewExtractors returns extractors over the loaded plugins.
func NewExtractors(p Plugins) *Extractors { return &Extractors{plugins: p} }

// For returns the extractor plugin of a document: an exact MIME type first,
// then a family ("text/*"), then the extension.
func (e *Extractors) For(name, mimeType string) (*wasm.Plugin, bool) {
	mimeType, _, _ = strings.Cut(mimeType, ";")
	mimeType = strings.ToLower(strings.TrimSpace(mimeType))
	ext := strings.ToLower(path.Ext(name))
	var family, byExt *wasm.Plugin
	for _, p := range e.plugins.Plugins() {
		m := p.Manifest()
		if m.Extractor == nil || !p.HasTool(ExtractTool) {
			continue
		}
		for _, t := range m.Extractor.MIMETypes {
			t = strings.ToLower(t)
			if t == mimeType {
				return p, true
			}
			if f, ok := strings.CutSuffix(t, "/*"); ok && strings.HasPrefix(mimeType, f+"/") && family == nil {
				family = p
			}
		}
		for _, x := range m.Extractor.Extensions {
			if strings.EqualFold(x, ext) && byExt == nil {
				byExt = p
			}
		}
	}
	if family != nil {
		return family, true
	}
	return byExt, byExt != nil
}

// extractResult is an extractor's structured result.
type extractResult struct {
	Index   content.Index    `json:"index"`
	Objects []content.Object `json:"objects"`
}

// Extract runs the document's extractor on in.
func (e *Extractors) Extract(ctx context.Context, name, mimeType string, in wasm.Input) (content.Index, []content.Object, error) {
	p, ok := e.For(name, mimeType)
	if !ok {
		return content.Index{}, nil, fmt.Errorf("%w: %s (%s)", ErrNoExtractor, mimeType, name)
	}
	args, _ := json.Marshal(map[string]string{"name": name, "mimeType": mimeType})
	r := p.Call(ctx, ExtractTool, args, &wasm.CallOptions{Input: in})
	if !r.OK {
		return content.Index{}, nil, fmt.Errorf("extractor %s: %w", p.Name(), r.Error)
	}
	var out extractResult
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return content.Index{}, nil, fmt.Errorf("extractor %s: result is not an index with objects: %w", p.Name(), err)
	}
	out.Index.TotalObjects = len(out.Objects)
	if len(out.Index.Objects) == 0 {
		for _, o := range out.Objects {
			out.Index.Objects = append(out.Index.Objects, content.Summarize(o))
		}
	}
	return out.Index, out.Objects, nil
}

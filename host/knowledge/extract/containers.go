package extract

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/content"
)

// ContainerTool is the container extractor's tool: arguments {"name",
// "mimeType", "path"?} (path: only that entry), the container through the
// input capability, every inner file through the output capability.
const ContainerTool = Tool

// ErrNotContainer: the file is not a container (no container plugin takes
// it). It is a tenancy.ErrInvalid, so the API answers 400.
var ErrNotContainer = fmt.Errorf("%w: not a container", tenancy.ErrInvalid)

// ErrNoEntry: the container has no entry at that path. It is a
// tenancy.ErrNotFound, so the API answers 404.
var ErrNoEntry = fmt.Errorf("%w: no such entry", tenancy.ErrNotFound)

// Containers is the ContainerResolver over the loaded plugins: an extractor
// plugin that declares the output capability resolves the MIME types and
// extensions its manifest names.
type Containers struct{ ex *Set }

// NewContainers returns the resolver over the loaded plugins, with no
// operator choice of extractors (Set.Containers applies one).
func NewContainers(p Runtime) *Containers { return &Containers{ex: New(p)} }

// Containers returns the container resolver that chooses plugins as e
// does (the operator's choice, its logger).
func (e *Set) Containers() *Containers { return &Containers{ex: e} }

// AttachmentsTool is the tool of a document extractor whose documents may
// carry files of their own (a PDF's attachments): arguments {"name",
// "mimeType", "path"?}, the document through the input capability, each
// attached file through the output capability, as a container's entries.
// Such an extractor declares the output capability without being a
// container plugin: its documents are extracted as documents, and their
// attachments resolved after (ingest.Pipeline.ingestAttachments).
const AttachmentsTool = "attachments"

// isContainerPlugin: an extractor that emits files (declares the output
// capability) and is not a document extractor with attachments.
func isContainerPlugin(p *wasm.Plugin) bool {
	_, attachments := p.Manifest().Tool(AttachmentsTool)
	return p.Manifest().HasCapability("output") && !attachments
}

// plugin is the container plugin of a document: its chosen extractor, when
// that one is a container plugin.
func (c *Containers) plugin(name, mimeType string) (*wasm.Plugin, bool) {
	p, ok := c.ex.For(name, mimeType)
	if !ok || !isContainerPlugin(p) {
		return nil, false
	}
	return p, true
}

// attachmentsPlugin is the document's extractor when it has an
// attachments tool (and may emit files).
func (c *Containers) attachmentsPlugin(name, mimeType string) (*wasm.Plugin, bool) {
	p, ok := c.ex.For(name, mimeType)
	if !ok || !p.Manifest().HasCapability("output") {
		return nil, false
	}
	_, has := p.Manifest().Tool(AttachmentsTool)
	return p, has
}

// CarriesAttachments implements AttachmentResolver.
func (c *Containers) CarriesAttachments(name, mimeType string) bool {
	_, ok := c.attachmentsPlugin(name, mimeType)
	return ok
}

// Attachments implements AttachmentResolver.
func (c *Containers) Attachments(ctx context.Context, name, mimeType string, in wasm.Input, sink wasm.OutputSink) (content.Index, bool, error) {
	p, ok := c.attachmentsPlugin(name, mimeType)
	if !ok {
		return content.Index{}, false, nil
	}
	args, _ := json.Marshal(map[string]string{"name": name, "mimeType": mimeType})
	r := c.ex.call(ctx, p, AttachmentsTool, args, &wasm.CallOptions{Input: in, Output: sink})
	if !r.OK {
		return content.Index{}, true, fmt.Errorf("attachments of %s by %s: %w", name, p.Name(), r.Error)
	}
	var out extractResult
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return content.Index{}, true, fmt.Errorf("attachments of %s by %s: result is not an index: %w", name, p.Name(), err)
	}
	return out.Index, true, nil
}

// Choose implements Chooser: the container's extractor and why.
func (c *Containers) Choose(name, mimeType string) Choice { return c.ex.Choose(name, mimeType) }

// Handles implements ContainerResolver.
func (c *Containers) Handles(name, mimeType string) bool {
	_, ok := c.plugin(name, mimeType)
	return ok
}

// Resolve implements ContainerResolver.
func (c *Containers) Resolve(ctx context.Context, name, mimeType, only string, in wasm.Input, sink wasm.OutputSink) (content.Index, error) {
	p, _, err := c.ex.pick(name, mimeType, ContainerTool)
	if err != nil || !isContainerPlugin(p) {
		return content.Index{}, fmt.Errorf("%w: %s (%s)", ErrNotContainer, name, mimeType)
	}
	args, _ := json.Marshal(unlock.WithPasswordArg(ctx, p, ContainerTool, map[string]string{"name": name, "mimeType": mimeType, "path": only}))
	r := c.ex.call(ctx, p, ContainerTool, args, &wasm.CallOptions{Input: in, Output: sink})
	if !r.OK {
		return content.Index{}, fmt.Errorf("container extractor %s: %w", p.Name(), r.Error)
	}
	var out extractResult
	if err := json.Unmarshal(r.Data, &out); err != nil {
		return content.Index{}, fmt.Errorf("container extractor %s: result is not an index: %w", p.Name(), err)
	}
	return out.Index, nil
}

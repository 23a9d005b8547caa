// Command office is the extractor plugin for Office documents, text formats,
// images and media (library: plugins/office/extract). It reads its document
// by range through the input capability and returns content objects with
// their references; malformed and hostile files (zip bombs inside a DOCX,
// truncated archives) end in a clear error inside the sandbox.
package main

import (
	"context"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/input"
	"github.com/agenthost/agenthost/plugins/office/extract"
)

type args struct {
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
}

type result struct {
	Index   content.Index    `json:"index"`
	Objects []content.Object `json:"objects"`
}

func init() {
	pdk.Tool("extract", "Extracts the content objects of a document.", func(a args) (result, error) {
		// Office files are read in many small pieces (ZIP entries, OLE
		// sectors): up to 32 MiB they are read into the plugin at once.
		f, err := input.Buffered(32 << 20)
		if err != nil {
			return result{}, err
		}
		idx, objs, err := extract.Extract(context.Background(), f, f.Size(), a.Name, a.MIMEType, extract.DefaultLimits())
		if err != nil {
			return result{}, pdk.Errorf("invalid_document", "%v", err)
		}
		if objs == nil {
			objs = []content.Object{}
		}
		return result{Index: idx, Objects: objs}, nil
	}, pdk.ReadOnly())
}

func main() {}

// Command textextract is a test extractor: it reads its document through the
// input capability and yields one text object per paragraph.
package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/input"
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
	pdk.Tool("extract", "Extracts the paragraphs of a text document.", func(a args) (result, error) {
		r, err := input.Open()
		if err != nil {
			return result{}, err
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return result{}, err
		}
		var out result
		for i, p := range strings.Split(string(data), "\n\n") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			out.Objects = append(out.Objects, content.Object{ID: fmt.Sprintf("para-%d", i+1), ContentType: content.Text, Data: p,
				Ref: content.Ref{Paragraph: i + 1, Location: fmt.Sprintf("paragraph:%d", i+1)}, Sequence: len(out.Objects)})
		}
		out.Index = content.Index{FileName: a.Name, MIMEType: a.MIMEType, Structure: map[string]any{"paragraphs": len(out.Objects)}}
		return out, nil
	}, pdk.ReadOnly())
}

func main() {}

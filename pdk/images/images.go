// Package images generates pictures with the provider's image model
// (capability "images"; declare it in plugin.json). Calls are billed to the
// user running the tool.
package images

import (
	"encoding/base64"
	"fmt"

	"github.com/agenthost/agenthost/pdk"
)

// Image is one generated picture.
type Image struct {
	MIMEType      string
	Data          []byte
	RevisedPrompt string
}

// Generate draws n pictures (0 means 1) of size "WxH" (empty: the
// provider's default) for prompt.
func Generate(prompt, size string, n int) ([]Image, error) {
	var resp struct {
		Images []struct {
			MIMEType      string `json:"mimeType"`
			Data          string `json:"data"`
			RevisedPrompt string `json:"revisedPrompt"`
		} `json:"images"`
	}
	if err := pdk.Invoke(generate, struct {
		Prompt string `json:"prompt"`
		Size   string `json:"size,omitempty"`
		N      int    `json:"n,omitempty"`
	}{prompt, size, n}, &resp); err != nil {
		return nil, err
	}
	out := make([]Image, 0, len(resp.Images))
	for i, im := range resp.Images {
		b, err := base64.StdEncoding.DecodeString(im.Data)
		if err != nil {
			return nil, fmt.Errorf("images.generate: image %d: %w", i, err)
		}
		out = append(out, Image{MIMEType: im.MIMEType, Data: b, RevisedPrompt: im.RevisedPrompt})
	}
	return out, nil
}

package mcpserver

import (
	"encoding/json"
	"testing"
)

// A contentResult tool's blocks are decoded with the SDK's types before
// they leave: what a hostile plugin makes of them is refused, not sent.
func TestContentBlocksFromPlugins(t *testing.T) {
	for _, c := range []struct {
		name, data string
		ok         bool
	}{
		{"text and image", `{"content":[{"type":"text","text":"a"},{"type":"image","data":"aGk=","mimeType":"image/png"}]}`, true},
		{"an unknown block type", `{"content":[{"type":"script","text":"x"}]}`, false},
		{"image data that is not base64", `{"content":[{"type":"image","data":"not base64!","mimeType":"image/png"}]}`, false},
		{"no blocks", `{"content":[]}`, false},
		{"not an object", `[1,2]`, false},
		{"content of the wrong type", `{"content":"text"}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := contentBlocks(json.RawMessage(c.data))
			if (err == nil) != c.ok {
				t.Fatalf("ok=%v, err %v, result %+v", c.ok, err, r)
			}
		})
	}
}

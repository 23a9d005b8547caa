package main

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/agenthost/agenthost/plugins/office/extract"
)

// TestManifestListsWhatTheLibraryExtracts keeps plugin.json's MIME types,
// which the host routes by, equal to what the library handles.
func TestManifestListsWhatTheLibraryExtracts(t *testing.T) {
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Extractor struct {
			MIMETypes []string `json:"mimeTypes"`
		} `json:"extractor"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	got, want := slices.Clone(m.Extractor.MIMETypes), extract.Supported()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("plugin.json lists %v\nthe library extracts %v", got, want)
	}
}

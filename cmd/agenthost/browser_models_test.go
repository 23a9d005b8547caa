package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowserModelPicker: in headless Chromium the composer offers the
// workspace's models with their prices (the built-in list prices of
// gpt-4o-mini and gpt-4o); a new conversation started with gpt-4o is
// answered by it (the scripted server is asked for gpt-4o), and after a
// reload the picker shows the conversation's kept choice.
func TestBrowserModelPicker(t *testing.T) {
	e2e := browserPrereqs(t)
	w := startUIWorld(t, "gpt-4o-mini", "gpt-4o")
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts-models"))
	os.RemoveAll(artefacts)
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	runNode(t, e2e, "models.test.mjs", w, artefacts)
	var asked []string
	for _, r := range w.model.ChatRequests() {
		if strings.HasPrefix(lastUser(r), "Which model answers?") { // the host appends notes (language)
			asked = append(asked, r.Model)
		}
	}
	if len(asked) == 0 {
		t.Fatal("the scripted server was not asked the conversation's question")
	}
	for _, m := range asked {
		if m != "gpt-4o" {
			t.Errorf("the conversation's rounds asked %v, want gpt-4o only", asked)
			break
		}
	}
	noCrash(t, w.server)
}

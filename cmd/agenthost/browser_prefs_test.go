package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowserPreferences: in headless Chromium a person sets the dark
// theme, custom instructions and a default model in Settings; after a
// reload the page opens dark with the settings kept; axe finds no serious
// or critical violation in the dark theme on the workspace (chat and
// files, a file and its details), a conversation, Settings, People, Admin
// and Connections; a new conversation
// started without touching the model picker is answered by the default
// model (the scripted server is asked for gpt-4o, not the chain's first)
// and its request carries the instructions (script's "Do you have my
// instructions?" answers with them).
func TestBrowserPreferences(t *testing.T) {
	e2e := browserPrereqs(t)
	w := startUIWorld(t, "gpt-4o-mini", "gpt-4o")
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts-prefs"))
	os.RemoveAll(artefacts)
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	runNode(t, e2e, "prefs.test.mjs", w, artefacts)
	var asked []string
	for _, r := range w.model.ChatRequests() {
		if strings.HasPrefix(lastUser(r), "Do you have my instructions?") {
			asked = append(asked, r.Model)
		}
	}
	if len(asked) == 0 {
		t.Fatal("the scripted server was not asked the conversation's question")
	}
	for _, m := range asked {
		if m != "gpt-4o" {
			t.Errorf("the conversation's rounds asked %v, want gpt-4o (the person's default) only", asked)
			break
		}
	}
	noCrash(t, w.server)
}

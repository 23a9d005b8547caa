package main

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
)

// TestBrowserLayout: in headless Chromium against a real serve (with a
// secret key, so connections and data sources are offered), each area of a
// workspace has its own place with its own URL (chat; files and knowledge;
// connections and data sources; the admin console for an admin), which a
// reload and the back button keep; the conversation list is beside every
// area, collapsible, and on a 390 px phone a drawer that opens, takes the
// focus and closes with Escape; a background job started through the API
// ends in the scripted model's answer and the person is notified in the
// page (unread count, the list, the live region) and by the browser's
// Notification API; a tool call waiting for approval while the person is
// in another area notifies them, and the notification opens the
// conversation at its pending approval. axe-core on each area in the
// light and the dark theme, and in German (whose longer labels do not
// overflow). Screenshots go to bin/ui-artefacts-layout.
func TestBrowserLayout(t *testing.T) {
	e2e := browserPrereqs(t)
	key := make([]byte, 32)
	rand.Read(key)
	t.Setenv("AGENTHOST_SECRET_KEY", base64.StdEncoding.EncodeToString(key))
	w := startUIWorld(t)
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts-layout"))
	os.RemoveAll(artefacts)
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	runNode(t, e2e, "layout.test.mjs", w, artefacts)
	noCrash(t, w.server)
}

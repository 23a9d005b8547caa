package main

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestBrowserGracefulStop (issue 28): the server gets SIGTERM while the
// page streams an answer, and starts again on the same data and address.
// The page, never reloaded, keeps the text streamed so far while the
// server is away, and never says "Stopped by the user": the round was
// handed off, not stopped, and the next start runs it to its answer,
// shown once (host/webui/e2e/stop.test.mjs, told by this test on its
// standard input when the server is down and when it is back).
func TestBrowserGracefulStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server twice")
	}
	e2e := browserPrereqs(t)
	w := startUIWorld(t)
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts-stop"))
	os.RemoveAll(artefacts)
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(e2e, "stop.test.mjs"))
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+w.base, "UI_TOKEN="+w.token, "UI_WS="+w.ws, "UI_ARTEFACTS="+artefacts, "UI_CHROMIUM="+chromium,
		"UI_PDF="+testcorpus.Path(t, "pdf", "deb-camlidl-1.04.pdf"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		for lines.Scan() {
			if strings.TrimSpace(lines.Text()) == want {
				return
			}
		}
		cmd.Wait()
		t.Fatalf("stop.test.mjs ended before %q:\n%s\nserver log tail:\n%s", want, stderr.String(), tail(w.server.stderr(), 40))
	}

	expect("streaming")
	first := w.server
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	first.wait(t)
	if first.code != 0 {
		t.Fatalf("the server exited %d after SIGTERM:\n%s", first.code, first.stderr())
	}
	if _, err := stdin.Write([]byte("down\n")); err != nil {
		t.Fatal(err)
	}
	expect("checked-down")

	addr := strings.TrimPrefix(w.base, "http://")
	w.server = startChild(t, "serve", "-data", w.data, "-addr", addr)
	w.server.waitFor(t, "agenthost listening")
	for i := 0; ; i++ {
		if resp, err := http.Get(w.base + "/healthz"); err == nil && resp.StatusCode == 200 {
			resp.Body.Close()
			break
		}
		if i > 3000 {
			t.Fatalf("no health after the restart:\n%s", w.server.stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := stdin.Write([]byte("up\n")); err != nil {
		t.Fatal(err)
	}
	stdin.Close() // nothing more to tell
	expect("done")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("stop.test.mjs: %v\n%s\nserver log tail:\n%s", err, stderr.String(), tail(w.server.stderr(), 40))
	}
	t.Logf("stop.test.mjs:\n%s", stderr.String())
	noCrash(t, first)
	noCrash(t, w.server)
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// chromium is Debian's browser (.ci/testdeps installs it); playwright-core
// cannot download its own here.
const chromium = "/usr/bin/chromium"

// browserPrereqs skips the browser tests when Chromium, Node or the npm
// packages are missing on a developer's machine, and fails them in CI
// (CI=true), where .ci/testdeps must have installed them.
func browserPrereqs(t testing.TB) string {
	t.Helper()
	e2e, _ := filepath.Abs(filepath.Join("..", "..", "host", "webui", "e2e"))
	var missing []string
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, chromium+" (apt-get install -y chromium)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node")
	}
	if _, err := os.Stat(filepath.Join(e2e, "node_modules", "playwright-core")); err != nil {
		missing = append(missing, "host/webui/e2e/node_modules (npm install there, or make testdeps)")
	}
	if len(missing) > 0 {
		msg := "browser tests need " + strings.Join(missing, ", ")
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; skipped here, CI runs them")
	}
	return e2e
}

// uiWorld is a real `serve` process on a fresh data directory with a
// scripted model, a bootstrapped tenant and a second tenant whose ids the
// first must not reach.
type uiWorld struct {
	base, token, ws  string
	data             string
	otherWS, otherWF string
	otherToken       string
	model            *llmtest.Server
	server           *child
}

var uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// lastUser is the last user message of a request: which question the
// scripted model is answering.
func lastUser(r llmtest.ChatRequest) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// script answers the questions the browser test asks, by their words:
// "interfaces" searches the knowledge store, then answers with a citation
// of the file the search found, a table and code, streamed in pieces;
// "slowly" streams a long answer slowly (for stop and reload); "please
// fail" is refused by the model (a failed run), "Break the provider" is
// answered HTTP 500; "propose an edit" writes a
// note and proposes an edit of it; "Do you have my instructions?" answers
// with the person's custom instructions the request carries; anything else
// gets a short reply.
func script(req llmtest.ChatRequest) llmtest.Step {
	if t, ok := titleReply(req); ok {
		return t
	}
	q := lastUser(req)
	var toolResult string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			toolResult = m.Content
		}
	}
	switch {
	case strings.Contains(q, "Break the provider"):
		// A provider that answers HTTP 500 was reached: the run fails
		// saying it answered with an error, not that it could not be
		// reached.
		return llmtest.Fail(500, "the scripted provider broke down")
	case strings.Contains(q, "please fail"):
		return llmtest.Fail(400, "the scripted model refuses this request")
	case strings.Contains(q, "interfaces") && toolResult == "":
		return llmtest.CallTools(llmtest.Call("searchKnowledge", `{"query":"interface attributes","limit":3}`))
	case strings.Contains(q, "interfaces"):
		// The passage's file: "(file <id>)" in searchKnowledge's text,
		// also when the result reached the model as a head (too large
		// for the 8,192-token window assumed for this model).
		id := uuidRe.FindString(toolResult)
		if m := regexp.MustCompile(`\(file (` + uuidRe.String() + `)\)`).FindStringSubmatch(toolResult); m != nil {
			id = m[1]
		}
		return llmtest.Reply("The manual describes **interface attributes** [1].\n\n" +
			"| attribute | meaning |\n|---|---|\n| `in` | passed to the function |\n| `out` | returned |\n\n" +
			"```idl\ninterface foo { int bar([in] int x); }\n```\n\n" +
			"Source: [camlidl manual, page 2](docItem:" + id + "#page=2)").WithChunkDelay(20 * time.Millisecond)
	case strings.Contains(q, "Tag the manual") && toolResult == "":
		// tagFile's policy in the workspace is ask (startUIWorld): the
		// round waits for the person.
		return llmtest.Step{Content: "I will tag the manual as final.", ToolCalls: []llmtest.ToolCall{
			llmtest.Call("tagFile", `{"file":"docItem:manual","add":["final"]}`)}}
	case strings.Contains(q, "Tag the manual"):
		return llmtest.Reply("Tag result: " + toolResult)
	case strings.Contains(q, "propose an edit"):
		// The agent writes a note, then proposes an edit of it.
		var results []string
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results = append(results, m.Content)
			}
		}
		switch len(results) {
		case 0:
			return llmtest.CallTools(llmtest.Call("writeFile", `{"name":"ui-note.md","content":"status: draft\n"}`))
		case 1:
			id := regexp.MustCompile(`file id: (` + uuidRe.String() + `)`).FindStringSubmatch(results[0])
			if id == nil {
				return llmtest.Reply("writeFile gave no file id: " + results[0])
			}
			return llmtest.CallTools(llmtest.Call("applyFileEdit", `{"file":"`+id[1]+`","edits":[{"old":"draft","new":"final"}],"description":"mark it final"}`))
		}
		return llmtest.Reply("I proposed an edit of ui-note.md.")
	case strings.HasPrefix(q, "Find and cite: ") && toolResult == "":
		// The preview's test: a search, then a citation of its first hit
		// at the hit's page (preview.test.mjs).
		return llmtest.CallTools(llmtest.Call("searchKnowledge", fmt.Sprintf(`{"query":%q,"limit":3}`, strings.TrimPrefix(q, "Find and cite: "))))
	case strings.HasPrefix(q, "Find and cite: "):
		m := regexp.MustCompile(`\(file (` + uuidRe.String() + `)\)[^\n]*?page (\d+)`).FindStringSubmatch(toolResult)
		if m == nil {
			return llmtest.Reply("The search found no page: " + toolResult)
		}
		return llmtest.Reply("It is on [page " + m[2] + "](docItem:" + m[1] + "#page=" + m[2] + ").")
	case strings.HasPrefix(q, "Cite page "):
		// "Cite page N of file ID": a citation without a search (the
		// preview's benchmark, of a document not indexed yet).
		var page int
		var id string
		fmt.Sscanf(q, "Cite page %d of file %s", &page, &id)
		return llmtest.Reply(fmt.Sprintf("See [page %d](docItem:%s#page=%d).", page, id, page))
	case strings.Contains(q, "Do you have my instructions?"):
		// Whether the person's custom instructions reached the model, as
		// the host sends them (agent.PersonInstructions).
		for _, m := range req.Messages {
			if m.Role == "system" && strings.Contains(m.Content, "<person-instructions>") {
				_, text, _ := strings.Cut(m.Content, "<person-instructions>\n")
				text, _, _ = strings.Cut(text, "\n</person-instructions>")
				return llmtest.Reply("Your instructions: " + text)
			}
		}
		return llmtest.Reply("I have no instructions of yours.")
	case strings.Contains(q, "slowly"):
		var b strings.Builder
		for i := 1; i <= 60; i++ {
			fmt.Fprintf(&b, "w%02d ", i)
		}
		return llmtest.Reply(strings.TrimSpace(b.String())).WithChunkDelay(120 * time.Millisecond)
	}
	return llmtest.Reply("Noted: " + q)
}

// titleReply answers the round's title request (AGENTHOST_AGENT_TITLES,
// docs/agent.md#conversation-titles) as a model does, with a few words
// and no more: the prompt's first seven words, so the steps find a
// conversation by its prompt, and a title of its own for the prompt about
// travel expenses, which the titles step looks for.
func titleReply(req llmtest.ChatRequest) (llmtest.Step, bool) {
	if !isTitleRequest(req) {
		return llmtest.Step{}, false
	}
	prompt, _, _ := strings.Cut(strings.TrimPrefix(lastUser(req), "User: "), "\n\nAssistant: ")
	if strings.Contains(prompt, "travel expenses") {
		return llmtest.Reply("Travel expense rules"), true
	}
	words := strings.Fields(prompt)
	return llmtest.Reply(strings.Join(words[:min(7, len(words))], " ")), true
}

// isTitleRequest tells the title call after a conversation's first round
// from the agent's calls, by its instruction.
func isTitleRequest(req llmtest.ChatRequest) bool {
	return len(req.Messages) > 0 && req.Messages[0].Role == "system" && strings.Contains(req.Messages[0].Content, "Write a short title")
}

func startUIWorld(t testing.TB, agentChain ...string) *uiWorld {
	t.Helper()
	w := &uiWorld{model: llmtest.New(t, llmtest.WithDefault(llmtest.Decide(script)), llmtest.WithChunkSize(4),
		llmtest.WithTranscript("Tell me about voice"))}
	data := filepath.Join(t.TempDir(), "data")
	out, _, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	ws := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out)
	tok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(out)
	out2, _, err := run0(t, "admin", "bootstrap", "-data", data, "-tenant", "Other", "-email", "eve@other.example")
	if err != nil {
		t.Fatal(err)
	}
	ws2 := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out2)
	tok2 := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(out2)
	if ws == nil || tok == nil || ws2 == nil || tok2 == nil {
		t.Fatalf("bootstrap printed %s %s", out, out2)
	}
	w.ws, w.token, w.otherWS, w.otherToken, w.data = ws[1], tok[1], ws2[1], tok2[1], data
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTHOST_OPENAI_BASE_URL", w.model.URL())
	t.Setenv("AGENTHOST_OPENAI_API_KEY", "sk-test")
	// A model name with a real window (gpt-4o-mini: 128,000 tokens): with
	// the 8,192 assumed for an unknown model and 17 plugins' tool
	// definitions, a search result of 1,200 tokens would not fit and reach
	// the model as a head (docs/agent.md#context-budget-and-result-fitting).
	t.Setenv("AGENTHOST_MODEL_AGENT", "gpt-4o-mini")
	if len(agentChain) > 0 { // a chain of several models (the model picker)
		t.Setenv("AGENTHOST_MODEL_AGENT", strings.Join(agentChain, ","))
	}
	t.Setenv("AGENTHOST_MODEL_TRANSCRIPTION", "whisper-1")
	t.Setenv("AGENTHOST_MODEL_SPEECH", "tts-1")
	w.server = startChild(t, "serve", "-data", data, "-addr", addr)
	w.server.waitFor(t, "agenthost listening")
	w.base = "http://" + addr
	for i := 0; ; i++ {
		if resp, err := http.Get(w.base + "/healthz"); err == nil && resp.StatusCode == 200 {
			resp.Body.Close()
			break
		}
		if i > 3000 {
			t.Fatalf("no health:\n%s", w.server.stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The workspace's admin makes tagFile wait for approval (as every
	// tool with an external side effect does by default).
	preq, _ := http.NewRequest("PUT", w.base+"/api/v1/workspaces/"+w.ws+"/tool-policies/tagFile", strings.NewReader(`{"policy":"ask"}`))
	preq.Header.Set("Authorization", "Bearer "+w.token)
	preq.Header.Set("Content-Type", "application/json")
	presp, err := http.DefaultClient.Do(preq)
	if err != nil {
		t.Fatal(err)
	}
	presp.Body.Close()
	if presp.StatusCode != 200 {
		t.Fatalf("tagFile's policy: %d", presp.StatusCode)
	}
	// The other tenant's conversation, started through the API.
	body, _ := json.Marshal(map[string]string{"prompt": "hello from the other tenant"})
	req, _ := http.NewRequest("POST", w.base+"/api/v1/workspaces/"+w.otherWS+"/workflows", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok2[1])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&wf)
	resp.Body.Close()
	if resp.StatusCode != 202 || wf.ID == "" {
		t.Fatalf("other tenant's workflow: %d", resp.StatusCode)
	}
	w.otherWF = wf.ID
	return w
}

// runNode runs a script of host/webui/e2e against the world and returns
// its standard output; its standard error (its step log) goes to the test
// log.
func runNode(t testing.TB, e2e, script string, w *uiWorld, artefacts string, extra ...string) string {
	t.Helper()
	cmd := exec.Command("node", append([]string{filepath.Join(e2e, script)}, extra...)...)
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(), "UI_BASE="+w.base, "UI_TOKEN="+w.token, "UI_WS="+w.ws,
		"UI_OTHER_WS="+w.otherWS, "UI_OTHER_WF="+w.otherWF, "UI_OTHER_TOKEN="+w.otherToken, "UI_ARTEFACTS="+artefacts, "UI_CHROMIUM="+chromium,
		"UI_PDF="+testcorpus.Path(t, "pdf", "deb-camlidl-1.04.pdf"), "UI_ZIP="+testcorpus.Path(t, "archives", "benign", "project-docs.zip"),
		// A scanned page with no text layer: with no OCR model configured, a page not read.
		"UI_SCANNED="+testcorpus.Path(t, "pdf", "ocrmypdf-c02-22-scanned.pdf"),
		// libarchive's encrypted 7z, password 12345678 (testdata/corpus/MANIFEST.tsv).
		"UI_ENCRYPTED="+testcorpus.Path(t, "archives", "formats", "libarchive-7zip-encrypted.7z"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("%s:\n%s", script, stderr.String())
	if err != nil {
		t.Fatalf("%s failed: %v\nserver log tail:\n%s", script, err, tail(w.server.stderr(), 40))
	}
	return stdout.String()
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestBrowser drives the workspace UI in headless Chromium against a real
// serve process: sign in, drag-and-drop a PDF and watch it become indexed,
// ask a question the scripted model answers while the tool log fills, open
// the citation at its page, stop a run, reload mid-run and see the stream
// resume without duplicates, name a file with @, switch to German, speak a
// question into the (fake) microphone and hear the answer; axe-core
// on the main views; the session cookie unreadable by script, no inline
// script under the CSP, another tenant's ids a not-found view. Screenshots
// of every step go to bin/ui-artefacts (printed).
func TestBrowser(t *testing.T) {
	e2e := browserPrereqs(t)
	w := startUIWorld(t)
	artefacts, _ := filepath.Abs(filepath.Join("..", "..", "bin", "ui-artefacts"))
	os.RemoveAll(artefacts) // this run's screenshots only
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots: %s", artefacts)
	runNode(t, e2e, "ui.test.mjs", w, artefacts)
	noCrash(t, w.server)
}

// TestUILogic runs the UI's pure modules under node's test runner: the
// conversation model (every way a run ends shown as such, replayed events
// applied once) and the Markdown renderer (no markup or script from a
// model, citations as buttons). It needs Node only.
func TestUILogic(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is missing")
		}
		t.Skip("node is missing")
	}
	cmd := exec.Command("node", "--test", "logic.test.mjs")
	cmd.Dir = filepath.Join("..", "..", "host", "webui", "e2e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fail 0") {
		t.Fatalf("unexpected output:\n%s", out)
	}
}

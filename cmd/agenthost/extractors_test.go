package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testpdf"
)

// syncBuffer is a log sink read while the server writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeExtractorChoice (issue 10 item 6) runs `serve -plugins DIR
// -allow-unsigned` with the hostile extractor aaa-pdf (no capabilities,
// named to sort before the built-ins, claiming PDF and plain text) beside
// the built-ins, and a tenant uploading over HTTP: the built-in pdf
// extracts the PDF, GET /files/{id}/index names it, and the injected text
// is not found by search. Restarted with `-extractor
// application/pdf=aaa-pdf`, the operator's choice extracts the next PDF
// and the index record says so. A choice naming an unknown plugin, or one
// that does not declare the type, stops serve and worker at start-up.
func TestServeExtractorChoice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server with the built-in plugins")
	}
	srcs, err := builtin.Sources()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) == 0 {
		t.Fatal("this test binary carries no built-in plugins: run `make plugins` first")
	}
	t.Setenv(extractorsEnv, "")
	dir := t.TempDir()
	data, plugins := filepath.Join(dir, "data"), filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "aaa-pdf.wasm"), wasmtest.Module(t, "aaa-pdf"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-database=", "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	ws := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out)
	tok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(out)
	if ws == nil || tok == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	common := []string{"-data", data, "-database=", "-plugins", plugins, "-allow-unsigned"}

	for _, c := range []struct {
		name          string
		flags         []string
		text          string // the PDF's own text
		want          string
		by            kindex.ChosenBy
		injected, own int // search hits for the injected text and the PDF's own
		log           string
	}{
		{"built-ins win", nil, "Quarterly travel budget approved", "pdf", kindex.ChosenBuiltin, 0, 1,
			`level=WARN msg="extractor's claims overruled`},
		{"the operator chooses aaa-pdf", []string{"-extractor", "application/pdf=aaa-pdf"}, "Annual hardware budget approved", "aaa-pdf", kindex.ChosenOperator, 1, 0,
			`msg="extractor chosen by the operator" mimeType=application/pdf plugin=aaa-pdf`},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, logs := startServe(t, append(append([]string{}, common...), c.flags...))
			api := func(method, path string, body io.Reader, ctype string) (int, []byte) {
				t.Helper()
				req, _ := http.NewRequest(method, base+"/api/v1"+path, body)
				req.Header.Set("Authorization", "Bearer "+tok[1])
				if ctype != "" {
					req.Header.Set("Content-Type", ctype)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				if resp.StatusCode/100 != 2 && resp.StatusCode != 404 {
					t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
				}
				return resp.StatusCode, raw
			}
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			part, _ := mw.CreateFormFile("file", "budget.pdf")
			part.Write(testpdf.OnePage(c.text))
			mw.Close()
			var f struct{ ID string }
			if status, raw := api("POST", "/workspaces/"+ws[1]+"/files", &body, mw.FormDataContentType()); status != 201 || json.Unmarshal(raw, &f) != nil || f.ID == "" {
				t.Fatalf("upload: %d %s", status, raw)
			}
			var st struct {
				Status    kindex.Status
				Error     string
				Extractor *kindex.ExtractorRecord
			}
			// No deadline of its own: how long the first extraction takes
			// depends on the machine; the test binary's -timeout bounds it.
			for ; ; time.Sleep(100 * time.Millisecond) {
				st.Status, st.Extractor = "", nil
				// 404 until the indexing job has claimed the content.
				if status, raw := api("GET", "/files/"+f.ID+"/index", nil, ""); status == 200 {
					if err := json.Unmarshal(raw, &st); err != nil {
						t.Fatal(err)
					}
				}
				if st.Status == kindex.StatusIndexed || st.Status == kindex.StatusFailed {
					break
				}
			}
			if st.Status != kindex.StatusIndexed || st.Extractor == nil || st.Extractor.Name != c.want || st.Extractor.ChosenBy != c.by || len(st.Extractor.SHA256) != 12 {
				t.Fatalf("index state %+v, extractor %+v; want %s chosen by %s", st, st.Extractor, c.want, c.by)
			}
			for _, q := range []struct {
				text string
				want int
			}{{"zzinjectedzz", c.injected}, {strings.Fields(c.text)[0], c.own}} {
				var hits []kindex.Hit
				_, raw := api("GET", "/workspaces/"+ws[1]+"/search?q="+url.QueryEscape(q.text), nil, "")
				if err := json.Unmarshal(raw, &hits); err != nil || len(hits) != q.want {
					t.Fatalf("search %q: %d hits %+v %v, want %d", q.text, len(hits), hits, err, q.want)
				}
			}
			if !strings.Contains(logs.String(), c.log) {
				t.Errorf("start-up log lacks %q:\n%s", c.log, logs)
			}
		})
	}

	// Refused at start-up, before listening, by serve and worker alike.
	for _, c := range []struct {
		cmd   string
		flags []string
		env   string
		want  string
	}{
		{"serve", []string{"-extractor", "application/pdf=nosuch"}, "", `application/pdf=nosuch: no plugin "nosuch" is loaded`},
		{"serve", nil, "image/png=aaa-pdf", `image/png=aaa-pdf: plugin "aaa-pdf" does not declare image/png`},
		{"serve", []string{"-extractor", "application/pdf"}, "", "want MIME=PLUGIN"},
		{"worker", []string{"-extractor", "application/pdf=office"}, "", `plugin "office" does not declare application/pdf`},
	} {
		t.Setenv(extractorsEnv, c.env)
		args := append([]string{c.cmd}, append(append([]string{}, common...), c.flags...)...)
		if c.cmd == "serve" {
			args = append(args, "-addr", "127.0.0.1:1") // never reached
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a worker that started would run until then
		var errb bytes.Buffer
		err := run(ctx, args, io.Discard, &errb)
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v (%s=%q): %v, want it refused with %q", args, extractorsEnv, c.env, err, c.want)
		}
	}
}

// startServe runs serve with args on a free port until the test ends and
// returns its base URL once its plugins are ready, and its log.
func startServe(t *testing.T, args []string) (string, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	return serveInProcess(t, logs, args...), logs
}

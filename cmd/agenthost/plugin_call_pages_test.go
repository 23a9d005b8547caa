package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestPluginCallInPages: `plugin call -pages N` runs a PDF's extract as its
// pre-scan and then readPages N pages a call, each result printed as it
// comes; together the batches hold every page's text as one extract call
// gives it. A plugin without those tools is refused with the reason.
func TestPluginCallInPages(t *testing.T) {
	pdfWasm := filepath.Join("..", "..", "host", "builtin", "wasm", "pdf.wasm")
	doc := testcorpus.Path(t, "pdf", "deb-camlidl-1.04.pdf") // 26 pages
	cache := []string{"-cache-dir", filepath.Join(t.TempDir(), "cache")}
	args := `{"name":"camlidl.pdf","mimeType":"application/pdf"}`
	whole, _, err := run0(t, append(append([]string{"plugin", "call"}, cache...), "-input", doc, pdfWasm, "extract", args)...)
	if err != nil {
		t.Fatal(err)
	}
	paged, _, err := run0(t, append(append([]string{"plugin", "call"}, cache...), "-pages", "10", "-input", doc, pdfWasm, "extract", args)...)
	if err != nil {
		t.Fatal(err)
	}
	results := decodeResults(t, paged)
	// The pre-scan, then pages 1-10, 11-20, 21-26.
	if len(results) != 4 {
		t.Fatalf("%d results, want the pre-scan and 3 batches", len(results))
	}
	want := pageTexts(t, decodeResults(t, whole))
	got := map[int]string{}
	for _, r := range results[1:] {
		for p, text := range pageTexts(t, []wasm.Result{r}) {
			if _, dup := got[p]; dup {
				t.Fatalf("page %d in two batches", p)
			}
			got[p] = text
		}
	}
	if len(want) != 26 || len(got) != len(want) {
		t.Fatalf("%d pages in pages, %d in one call; want 26 each", len(got), len(want))
	}
	for p, text := range want {
		if got[p] != text {
			t.Errorf("page %d differs: in pages %q, in one call %q", p, got[p], text)
		}
	}

	echo := filepath.Join(t.TempDir(), "echo.wasm")
	if err := os.WriteFile(echo, wasmtest.Module(t, "echo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run0(t, "plugin", "call", "-pages", "5", echo, "echo", `{"text":"a"}`); err == nil || !strings.Contains(err.Error(), "prescan and readPages") {
		t.Fatalf("-pages on a plugin without readPages: %v", err)
	}
}

// decodeResults reads the JSON results plugin call printed one after another.
func decodeResults(t *testing.T, out string) []wasm.Result {
	t.Helper()
	var rs []wasm.Result
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var r wasm.Result
		if err := dec.Decode(&r); err == io.EOF {
			return rs
		} else if err != nil {
			t.Fatal(err)
		}
		if !r.OK {
			t.Fatalf("a call failed: %+v", r.Error)
		}
		rs = append(rs, r)
	}
}

// pageTexts maps each page to its text object's text.
func pageTexts(t *testing.T, rs []wasm.Result) map[int]string {
	t.Helper()
	texts := map[int]string{}
	for _, r := range rs {
		var data struct {
			Objects []struct {
				ID   string `json:"id"`
				Data string `json:"data"`
				Ref  struct {
					PageIndex int `json:"pageIndex"`
				} `json:"contextRef"`
			} `json:"objects"`
		}
		if err := json.Unmarshal(r.Data, &data); err != nil {
			t.Fatal(err)
		}
		for _, o := range data.Objects {
			if strings.HasPrefix(o.ID, "form-") {
				continue
			}
			texts[o.Ref.PageIndex] += o.Data
		}
	}
	return texts
}

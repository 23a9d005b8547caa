package agentcontext_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/knowledge/agentcontext"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/pdk/content"
)

const model = "gpt-4o-mini"

func hit(file, id, text string, ref content.Ref) kindex.Hit {
	return kindex.Hit{Chunk: kindex.Chunk{ID: id, Text: text, Ref: ref}, FileID: "f-" + file, FileName: file}
}

// words is n distinct words, so token counts grow with n.
func words(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(prefix)
		b.WriteString(strings.Repeat("x", i%7))
	}
	return b.String()
}

func TestAssemble(t *testing.T) {
	inst1 := agentcontext.ChunkPart(agentcontext.PriorityInstance, hit("q4.pdf", "c1", "Revenue Q4 was 12.5M CHF.", content.Ref{PageIndex: 5}))
	inst2 := agentcontext.ChunkPart(agentcontext.PriorityInstance, hit("budget.xlsx", "c2", "Budget 2027: 13M CHF.", content.Ref{SheetName: "Plan"}))
	long := agentcontext.ChunkPart(agentcontext.PriorityInstance, hit("long.pdf", "c3", words("alpha", 600), content.Ref{PageIndex: 1}))
	entity := agentcontext.Part{Priority: agentcontext.PriorityEntities, Text: "company: Acme AG"}
	shared := agentcontext.ChunkPart(agentcontext.PriorityShared, hit("handbook.docx", "s1", "Travel: hotel nights up to 180 CHF.", content.Ref{Paragraph: 4}))
	summary := agentcontext.Part{Priority: agentcontext.PrioritySummary, Text: "The user asked about Q4; revenue was found on page 5."}
	tool := agentcontext.Part{Priority: agentcontext.PriorityToolResults, Text: "search (ok): 3 hits in q4.pdf"}
	all := []agentcontext.Part{tool, summary, shared, entity, inst2, inst1} // out of order on purpose

	cases := []struct {
		name   string
		budget int
		parts  []agentcontext.Part
		// want appear in this order; absent must not appear.
		want, absent               []string
		placed, truncated, dropped int
		sources                    []string
	}{
		{
			name: "everything fits, in priority order", budget: 2000, parts: all,
			want: []string{"## Documents of this workspace", "[1] budget.xlsx, sheet Plan (file id f-budget.xlsx)\nBudget 2027", "[2] q4.pdf, page 5",
				"## Facts noted", "- company: Acme AG", "## Shared documents", "[3] handbook.docx, paragraph 4", "## Summary", "The user asked", "## Results of earlier tool calls", "- search (ok)"},
			absent: []string{"Left out"}, placed: 6, sources: []string{"c2", "c1", "s1"},
		},
		{
			name: "the lowest priorities go first", budget: 195, parts: all,
			want:   []string{"[2] q4.pdf", "company: Acme AG", "[3] handbook.docx", "Left out for space: 1 summary, 1 tool result(s)."},
			absent: []string{"## Summary", "search (ok)"}, placed: 4, dropped: 2, sources: []string{"c2", "c1", "s1"},
		},
		{
			name: "a chunk too long is cut with a note, the rest left out", budget: 400, parts: []agentcontext.Part{long, entity, summary},
			want:   []string{"[1] long.pdf, page 1 (file id f-long.pdf)\nalpha", "…[cut for space:", "tokens shown]", "Left out for space: 1 fact(s), 1 summary."},
			absent: []string{"Acme"}, placed: 1, truncated: 1, dropped: 2, sources: []string{"c3"},
		},
		{
			name: "too little room to show a useful cut drops it", budget: 150, parts: []agentcontext.Part{inst1, long, entity},
			want:   []string{"[1] q4.pdf", "Left out for space: 1 chunk(s) of the workspace's documents, 1 fact(s)."},
			absent: []string{"alpha", "cut for space"}, placed: 1, dropped: 2, sources: []string{"c1"},
		},
		{name: "no budget", budget: 0, parts: all, dropped: 6},
		{name: "budget below the introduction", budget: 10, parts: all, dropped: 6},
		{name: "nothing to place", budget: 1000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := agentcontext.Assemble(model, c.budget, c.parts)
			if a.Placed != c.placed || a.Truncated != c.truncated || a.Dropped != c.dropped {
				t.Fatalf("placed %d truncated %d dropped %d, want %d %d %d\n%s", a.Placed, a.Truncated, a.Dropped, c.placed, c.truncated, c.dropped, a.Text)
			}
			if got := llm.CountTokens(model, a.Text); got != a.Tokens || got > c.budget {
				t.Fatalf("tokens %d (reported %d) for a budget of %d", got, a.Tokens, c.budget)
			}
			if c.placed == 0 && a.Text != "" {
				t.Fatalf("text with nothing placed: %q", a.Text)
			}
			rest := a.Text
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("%q missing or out of order in:\n%s", w, a.Text)
				}
				rest = rest[i+len(w):]
			}
			for _, w := range c.absent {
				if strings.Contains(a.Text, w) {
					t.Fatalf("%q present in:\n%s", w, a.Text)
				}
			}
			var ids []string
			for _, s := range a.Sources {
				ids = append(ids, s.ID)
			}
			if strings.Join(ids, ",") != strings.Join(c.sources, ",") {
				t.Fatalf("sources %v, want %v", ids, c.sources)
			}
		})
	}
}

func TestReference(t *testing.T) {
	cases := []struct {
		name string
		hit  kindex.Hit
		want string
	}{
		{"page and section", hit("q4.pdf", "1", "", content.Ref{PageIndex: 5, SectionID: "2.1"}), "q4.pdf, page 5, section 2.1 (file id f-q4.pdf)"},
		{"sheet", hit("b.xlsx", "1", "", content.Ref{SheetName: "Q4", Location: "sheet:Q4!A1:F20"}), "b.xlsx, sheet Q4 (file id f-b.xlsx)"},
		{"slide with label", hit("deck.pptx", "1", "", content.Ref{SlideIndex: 3, Label: "Outlook"}), `deck.pptx, slide 3, "Outlook" (file id f-deck.pptx)`},
		{"inside a container", hit("archive.zip", "1", "", content.Ref{ContainerPath: "archive.zip/folder/report.pdf", PageIndex: 2}),
			"archive.zip/folder/report.pdf, page 2 (file id f-archive.zip)"},
		{"only a location", hit("a.bin", "1", "", content.Ref{Location: "region:top"}), "a.bin, region:top (file id f-a.bin)"},
		{"nothing but the file", hit("n.txt", "1", "", content.Ref{}), "n.txt (file id f-n.txt)"},
	}
	for _, c := range cases {
		if got := agentcontext.Reference(c.hit); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestTruncateTokens(t *testing.T) {
	text := words("beta", 300) + " Grüße " + words("gamma", 300)
	for _, n := range []int{1, 10, 100, 500, 5000} {
		got := agentcontext.TruncateTokens(model, text, n)
		if c := llm.CountTokens(model, got); c > n {
			t.Fatalf("n=%d: %d tokens", n, c)
		}
		if !strings.HasPrefix(text, got) || !utf8.ValidString(got) {
			t.Fatalf("n=%d: not a valid prefix", n)
		}
		if n >= 100 && n < 1000 && llm.CountTokens(model, got) < n*3/4 {
			t.Fatalf("n=%d: only %d tokens kept", n, llm.CountTokens(model, got))
		}
		if n == 5000 && got != text {
			t.Fatal("a text that fits is kept whole")
		}
	}
	if agentcontext.TruncateTokens(model, text, 0) != "" {
		t.Fatal("n=0 keeps nothing")
	}
}

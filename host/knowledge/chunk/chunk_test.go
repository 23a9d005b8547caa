package chunk_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/pdk/content"
)

func TestSplit(t *testing.T) {
	para := strings.Repeat("The quarterly revenue grew steadily across all regions. ", 30) // ~300 tokens
	long := strings.Join([]string{para, para, para, para}, "\n\n")                         // ~1,200 tokens
	objs := []content.Object{
		{ID: "a", ContentType: content.Text, Data: "Short text.", Ref: content.Ref{PageIndex: 1}},
		{ID: "b", ContentType: content.Image, Data: "…", Ref: content.Ref{PageIndex: 1}},
		{ID: "c", ContentType: content.Text, Data: long, Ref: content.Ref{PageIndex: 2, SectionID: "s2"}},
		{ID: "d", ContentType: content.Text, Data: "   ", Ref: content.Ref{PageIndex: 3}},
		{ID: "e", ContentType: content.Text, Data: strings.Repeat("x", 20000), Ref: content.Ref{PageIndex: 4}},
	}
	chunks := chunk.Split(objs, 512)
	var fromC, fromE int
	var joined []string
	for i, c := range chunks {
		if c.Seq != i || c.Tokens > 512 || c.Tokens != llm.CountTokens("text-embedding-3-small", c.Text) {
			t.Fatalf("chunk %d: seq %d, %d tokens", i, c.Seq, c.Tokens)
		}
		switch c.ObjectID {
		case "c":
			fromC++
			joined = append(joined, c.Text)
			if c.Ref.PageIndex != 2 || c.Ref.SectionID != "s2" {
				t.Fatalf("chunk lost its reference: %+v", c.Ref)
			}
		case "e":
			fromE++
		case "b", "d":
			t.Fatalf("chunked object %s", c.ObjectID)
		}
	}
	if chunks[0].ObjectID != "a" || fromC < 3 || fromE < 2 {
		t.Fatalf("chunks: a first %v, %d from c, %d from e", chunks[0].ObjectID, fromC, fromE)
	}
	// Cutting loses no words.
	if got, want := strings.Fields(strings.Join(joined, " ")), strings.Fields(long); !slices.Equal(got, want) {
		t.Fatalf("words lost or changed: %d vs %d", len(got), len(want))
	}
}

func TestTerms(t *testing.T) {
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"What was the revenue in Q4?", []string{"revenue", "q4"}},
		{"Wie hoch war der Umsatz in Zürich?", []string{"hoch", "umsatz", "zürich"}},
		{"the", []string{"the"}},
		{`revenue" OR NEAR(x) * ) | !& :`, []string{"revenue", "near"}},
		{"?!", nil},
	} {
		if got := kindex.Terms(c.q); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.q, got, c.want)
		}
	}
}

// TestSplitMarksHidden: chunks of an object its document hides (an
// extractor's Metadata["hidden"]) are marked; others are not.
func TestSplitMarksHidden(t *testing.T) {
	chunks := chunk.Split([]content.Object{
		{ID: "s1", ContentType: content.Text, Data: "Shown slide"},
		{ID: "s2", ContentType: content.Text, Data: "Hidden slide", Metadata: map[string]any{"hidden": true}},
		{ID: "s3", ContentType: content.Text, Data: "Odd metadata", Metadata: map[string]any{"hidden": "yes"}},
	}, 0)
	if len(chunks) != 3 || chunks[0].Hidden || !chunks[1].Hidden || chunks[2].Hidden {
		t.Fatalf("hidden marks: %+v", chunks)
	}
}

package extract

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/pdk/content"
)

// obj is the part of an object the simple-format tests compare.
type obj struct {
	data, location, section, label string
}

func simple(objs []content.Object) []obj {
	out := make([]obj, len(objs))
	for i, o := range objs {
		out[i] = obj{o.Data, o.Ref.Location, o.Ref.SectionID, o.Ref.Label}
	}
	return out
}

func TestSimpleFormats(t *testing.T) {
	cases := []struct {
		name, file, mime, input string
		want                    []obj
		structure               map[string]any
	}{
		{
			name: "markdown sections", file: "notes.md",
			input: "intro line\n\n# Title\ntext\n```\n# not a heading\n```\nSetext\n------\nmore\n## Sub ##\nend\n# Next\n",
			want: []obj{
				{"intro line", "line:1", "", ""},
				{"# Title\ntext\n```\n# not a heading\n```", "line:3-7", "1", "Title"},
				{"Setext\n------\nmore", "line:8-10", "1.1", "Setext"},
				{"## Sub ##\nend", "line:11-12", "1.2", "Sub"},
				{"# Next", "line:13", "2", "Next"},
			},
		},
		{
			name: "text/plain yields to .md", file: "x.md", mime: "text/plain",
			input: "# A\nb", want: []obj{{"# A\nb", "line:1-2", "1", "A"}},
		},
		{
			name: "csv with semicolons and a quoted newline", file: "t.csv",
			input:     "name;note\nann;\"two\nlines\"\nbob;x|y\n",
			want:      []obj{{"| name | note |\n| --- | --- |\n| ann | two<br>lines |\n| bob | x\\|y |", "row:2-3", "", ""}},
			structure: map[string]any{"rows": 3, "columns": 2, "delimiter": ";"},
		},
		{
			name: "tsv by type", file: "t.txt", mime: "text/tab-separated-values",
			input: "a\tb\n1\t2", want: []obj{{"| a | b |\n| --- | --- |\n| 1 | 2 |", "row:2", "", ""}},
		},
		{
			name: "json", file: "x.json",
			input: `{"b":[1,2],"a":{"c":"d"}}`,
			want:  []obj{{"{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": {\n    \"c\": \"d\"\n  }\n}", "json:$", "", ""}},
		},
		{
			name: "json lines", file: "x.jsonl",
			input: "{\"n\":1}\n{\"n\":2}\n",
			want:  []obj{{"[\n  {\n    \"n\": 1\n  },\n  {\n    \"n\": 2\n  }\n]", "json:record 1-2", "", ""}},
		},
		{
			name: "not json after all", file: "x.json", input: "{oops",
			want: []obj{{"{oops", "line:1", "", ""}},
		},
		{
			name: "xml", file: "x.xml",
			input: `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><r xmlns:x="urn:x"><!-- c --><x:item id="1">one &amp; &b;</x:item><empty/><nest><deep>two</deep></nest></r>`,
			want:  []obj{{"<r xmlns:x=\"urn:x\">\n  <x:item id=\"1\">one &amp; &amp;b;</x:item>\n  <empty/>\n  <nest>\n    <deep>two</deep>\n  </nest>\n</r>", "xml:/r/*[1-3]", "", ""}},
		},
		{
			name: "html", file: "page.html",
			input: `<html><head><title>The Page</title><style>p{}</style><script>var x=1</script></head><body>
<nav><a href="/">Home</a> <a href="/b">Blog</a></nav>
<p>Lead   text with <b>bold</b> and <a href="x">a link</a>.</p>
<h1>First</h1><p>One<br>Two</p><div hidden>secret</div><ul><li>a</li><li>b<ol><li>c</li></ol></li></ul>
<h2>Second</h2><table><tr><th>k</th><th>v</th></tr><tr><td>x</td><td colspan="2">y</td></tr></table><img alt="A cat" src="c.png">
<pre>  keep   this
  as is</pre><noscript>enable js</noscript>
</body></html>`,
			want: []obj{
				{"Lead text with bold and a link.", "", "", "The Page"},
				{"# First\n\nOne\nTwo\n\n- a\n- b\n\n  1. c", "", "1", "First"},
				{"## Second\n\n| k | v |  |\n| --- | --- | --- |\n| x | y |  |\n\n[image: A cat]\n\n```\n  keep   this\n  as is\n```", "", "1.1", "Second"},
			},
			structure: map[string]any{"title": "The Page"},
		},
		{
			name: "utf-16 text", file: "u.txt",
			input: "\xff\xfeh\x00i\x00\n\x00\xe9\x00",
			want:  []obj{{"hi\né", "line:1-2", "", ""}},
		},
		{
			name: "windows-1252 text", file: "w.txt",
			input: "caf\xe9 \x93quoted\x94",
			want:  []obj{{"café \u201cquoted\u201d", "line:1", "", ""}},
		},
		{
			name: "sniffed html without name or type", file: "", input: "<!DOCTYPE html><p>hello</p>",
			want: []obj{{"hello", "", "", ""}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			idx, objs := mustRun(t, []byte(c.input), c.file, c.mime, Limits{})
			if got := simple(objs); !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			for k, v := range c.structure {
				if idx.Structure[k] != v {
					t.Errorf("structure[%s] = %v, want %v", k, idx.Structure[k], v)
				}
			}
		})
	}
}

// TestBlocks: long inputs are split into blocks near the block size, at
// blank lines where possible, with line ranges that cover every line.
func TestBlocks(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&b, "paragraph %d line one\nparagraph %d line two\n\n", i, i)
	}
	_, objs := mustRun(t, []byte(b.String()), "long.txt", "", Limits{BlockBytes: 1000})
	if len(objs) < 20 {
		t.Fatalf("%d blocks", len(objs))
	}
	next := 1
	for _, o := range objs {
		var first, last int
		if _, err := fmt.Sscanf(o.Ref.Location, "line:%d-%d", &first, &last); err != nil {
			t.Fatalf("location %q", o.Ref.Location)
		}
		if first < next || first > next+1 || len(o.Data) > 1100 || !strings.HasSuffix(o.Data, "line two") {
			t.Errorf("block %q at %s after line %d", o.Data[:20], o.Ref.Location, next-1)
		}
		next = last + 1
	}
	// Large JSON splits at top-level members.
	var j strings.Builder
	j.WriteString("{")
	for i := range 200 {
		if i > 0 {
			j.WriteString(",")
		}
		fmt.Fprintf(&j, `"key%d":{"v":"%s"}`, i, strings.Repeat("x", 50))
	}
	j.WriteString(`,"odd key":1}`)
	_, objs = mustRun(t, []byte(j.String()), "big.json", "", Limits{BlockBytes: 2000})
	if len(objs) < 5 || objs[0].Ref.Location != "json:$.key0..$.key"+fmt.Sprint(strings.Count(objs[0].Data, `"v"`)-1) ||
		!strings.HasSuffix(objs[len(objs)-1].Ref.Location, `..$["odd key"]`) {
		t.Errorf("%d objects, first %q, last %q", len(objs), objs[0].Ref.Location, objs[len(objs)-1].Ref.Location)
	}
}

func TestDispatch(t *testing.T) {
	sup := Supported()
	if !slices.IsSorted(sup) || !slices.Contains(sup, "application/vnd.openxmlformats-officedocument.wordprocessingml.document") ||
		!slices.Contains(sup, "text/csv") || !slices.Contains(sup, "video/webm") {
		t.Errorf("Supported() = %v", sup)
	}
	docx := docxOf(t, wp("", "hello"))
	for _, c := range []struct{ name, mime string }{
		{"a.docx", ""},
		{"a.docx", "application/octet-stream"},
		{"a.docx", "application/zip"},
		{"a.bin", "application/vnd.openxmlformats-officedocument.wordprocessingml.document; charset=binary"},
		{"", ""}, // sniffed from the package's parts
	} {
		idx, objs, err := run(t, docx, c.name, c.mime, Limits{})
		if err != nil || len(objs) != 1 || objs[0].Data != "hello" || idx.MIMEType != mimeDOCX {
			t.Errorf("%q %q: %v %q", c.name, c.mime, err, texts(objs))
		}
	}
	for _, c := range []struct {
		name, mime string
		data       []byte
	}{
		{"a.exe", "application/x-msdownload", []byte("MZ\x90\x00\x03\x00\x00\x00")},
		{"noext", "", []byte{0, 1, 2, 3, 0, 0, 0}},
		{"a.zip", "application/zip", zipOf(t, entry{name: "x.txt", body: "x"})},
	} {
		if _, _, err := run(t, c.data, c.name, c.mime, Limits{}); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: err %v, want ErrUnsupported", c.name, err)
		}
	}
}

// TestOutputLimits: text and object limits truncate and say so.
func TestOutputLimits(t *testing.T) {
	body := strings.Repeat(wp("", strings.Repeat("word ", 20)), 100)
	idx, objs := mustRun(t, docxOf(t, body), "a.docx", "", Limits{MaxObjects: 5})
	if len(objs) != 5 || !strings.Contains(idx.Structure["truncated"].(string), "object limit") {
		t.Errorf("%d objects, structure %v", len(objs), idx.Structure)
	}
	idx, objs = mustRun(t, docxOf(t, body), "a.docx", "", Limits{MaxTextBytes: 250})
	total := 0
	for _, o := range objs {
		total += len(o.Data)
	}
	if total != 250 || len(objs) != 3 || objs[2].Metadata["truncated"] != true || idx.Structure["truncated"] == nil {
		t.Errorf("%d bytes in %d objects, structure %v", total, len(objs), idx.Structure)
	}
}

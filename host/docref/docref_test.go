package docref

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

const (
	doc = "0192f1a0-7b3c-7def-8a12-3456789abcde"
	msg = "0192f1a0-7b3c-7def-8a12-000000000001"
)

func TestParseString(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Ref
	}{
		{"docItem:" + doc, Ref{Kind: Item, ID: doc}},
		{"  docItem:" + doc + "  ", Ref{Kind: Item, ID: doc}},
		{"DocItem:" + doc, Ref{Kind: Item, ID: doc}},
		{"docItem:" + doc + ":report.pdf", Ref{Kind: Item, ID: doc, FileName: "report.pdf"}},
		{"docItem:" + doc + ":a:b.txt", Ref{Kind: Item, ID: doc, FileName: "a:b.txt"}},
		{"docItem:legacy-id", Ref{Kind: Item, ID: "legacy-id"}},
		{"docList:upload", Ref{Kind: List, Label: "upload"}},
		// A label may hold colons (a tool's "writeFile:<name>"): only an
		// id before the first colon is a message.
		{"docList:writeFile:summary.md", Ref{Kind: List, Label: "writeFile:summary.md"}},
		{"docList:" + msg + ":task1_results", Ref{Kind: List, MessageID: msg, Label: "task1_results"}},
		{"docList:" + msg + ":writeFile:a.md", Ref{Kind: List, MessageID: msg, Label: "writeFile:a.md"}},
		{doc, Ref{Kind: Bare, ID: doc}},
	} {
		got, err := ParseString(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseString(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if err == nil && c.want.Kind != Bare {
			again, err := ParseString(got.String())
			if err != nil || again != got {
				t.Errorf("round trip of %q: %q → %+v %v", c.in, got.String(), again, err)
			}
		}
	}
}

func TestParseStringRefuses(t *testing.T) {
	for _, in := range []string{"", "   ", "docItem:", "docList:", "docList:" + msg + ":", "http://x/y", "../etc/passwd",
		"docItem:a\nb", string(make([]byte, MaxRefBytes+1))} {
		if r, err := ParseString(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseString(%q) = %+v, %v; want ErrInvalid", in, r, err)
		}
	}
}

// TestParseShapes: the four list shapes and the docList forms all
// become the same typed references.
func TestParseShapes(t *testing.T) {
	item := Ref{Kind: Item, ID: doc}
	for _, c := range []struct {
		name, in string
		want     []Ref
	}{
		{"canonical list", `["docItem:` + doc + `", "docList:` + msg + `:out"]`, []Ref{item, {Kind: List, MessageID: msg, Label: "out"}}},
		{"LLM list style", `[{"id": "docItem:` + doc + `", "name": "x.pdf"}]`, []Ref{{Kind: Item, ID: doc, FileName: "x.pdf"}}},
		{"LLM list style, bare id", `[{"id": "` + doc + `", "name": "x.pdf"}]`, []Ref{{Kind: Bare, ID: doc}}},
		{"dict wrapper", `{"documents": [{"id": "docItem:` + doc + `"}]}`, []Ref{item}},
		{"dict wrapper of strings", `{"documentList": ["docList:upload"]}`, []Ref{{Kind: List, Label: "upload"}}},
		{"single string", `"docItem:` + doc + `"`, []Ref{item}},
		{"docList object", `[{"label": "out", "messageId": "` + msg + `"}]`, []Ref{{Kind: List, MessageID: msg, Label: "out"}}},
		{"mixed", `["docItem:` + doc + `", {"documentId": "docItem:` + doc + `:r.txt"}]`, []Ref{item, {Kind: Item, ID: doc, FileName: "r.txt"}}},
		{"null", `null`, []Ref{}},
		{"empty list", `[]`, []Ref{}},
	} {
		got, err := Parse(json.RawMessage(c.in))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Parse(%s) = %+v, %v; want %+v", c.name, c.in, got, err, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{`42`, `true`, `{"other": 1}`, `[1]`, `[[["docItem:a"]]]`, `{`, `[{"id": 5}]`, `{"documents": {"documents": {"documents": ["a"]}}}`} {
		if got, err := Parse(json.RawMessage(in)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%s) = %+v, %v; want ErrInvalid", in, got, err)
		}
	}
}

func TestCoerceArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"documents":{"type":"array","items":{"type":"string"}},
		"prompt":{"type":"string"},
		"files":{"type":"string"}}}`)
	for _, c := range []struct{ in, want string }{
		{`{"documents":{"documents":[{"id":"docItem:` + doc + `"}]},"prompt":"p"}`, `{"documents":["docItem:` + doc + `"],"prompt":"p"}`},
		{`{"documents":"docItem:` + doc + `"}`, `{"documents":["docItem:` + doc + `"]}`},
		{`{"documents":[{"id":"` + doc + `"}]}`, `{"documents":["` + doc + `"]}`},
		// Already right, another parameter, or not parseable: untouched.
		{`{"documents":["docItem:a"]}`, `{"documents":["docItem:a"]}`},
		{`{"files":{"documents":[]}}`, `{"files":{"documents":[]}}`},
		{`{"documents":42}`, `{"documents":42}`},
		{`not json`, `not json`},
	} {
		got := CoerceArgs(schema, []byte(c.in))
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(c.want), &w) != nil {
			if string(got) != c.want {
				t.Errorf("CoerceArgs(%s) = %s, want %s", c.in, got, c.want)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("CoerceArgs(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

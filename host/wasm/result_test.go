package wasm

import (
	"strings"
	"testing"
)

func TestParseFrame(t *testing.T) {
	cases := []struct {
		name, in string
		ok       bool
		text     string
		data     string
		code     string
		err      string // parse error fragment
	}{
		{"text", "{\"ok\":true,\"body\":\"text\"}\nhello\nworld", true, "hello\nworld", "", "", ""},
		{"json", "{\"ok\":true,\"body\":\"json\"}\n{\"a\":1}", true, "", `{"a":1}`, "", ""},
		{"json with summary", "{\"ok\":true,\"body\":\"json\",\"text\":\"one row\"}\n[1]", true, "one row", "[1]", "", ""},
		{"none", "{\"ok\":true,\"body\":\"none\"}\n", true, "", "", "", ""},
		{"error", "{\"ok\":false,\"error\":{\"code\":\"not_found\",\"message\":\"x\"}}\n", false, "", "", "not_found", ""},
		{"error without code", "{\"ok\":false,\"error\":{\"message\":\"x\"}}\n", false, "", "", CodePluginError, ""},
		{"failure without error", "{\"ok\":false}\n", false, "", "", CodePluginError, ""},
		{"no header line", "just text", false, "", "", "", "no header"},
		{"bad header", "{ok}\nx", false, "", "", "", "header"},
		{"invalid json body", "{\"ok\":true,\"body\":\"json\"}\n{", false, "", "", "", "not valid JSON"},
		{"unknown body type", "{\"ok\":true,\"body\":\"xml\"}\n<a/>", false, "", "", "", "unknown body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseFrame([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.OK != tc.ok || r.Text != tc.text || string(r.Data) != tc.data {
				t.Fatalf("got %+v", r)
			}
			if tc.code != "" && (r.Error == nil || r.Error.Code != tc.code) {
				t.Fatalf("error %+v, want code %s", r.Error, tc.code)
			}
		})
	}
}

func TestStdoutSink(t *testing.T) {
	var s stdoutSink
	s.reset(10)
	s.Write([]byte("log line\n"))
	s.Write(append(append([]byte(nil), frameMagic...), 5, 0, 0, 0, 0, 0, 0, 0))
	s.Write([]byte("ab"))
	s.Write([]byte("cde"))
	if !s.framed || string(s.payload) != "abcde" || s.want != 0 || !strings.Contains(s.logOutput.String(), "log line") {
		t.Fatalf("sink = %+v", s)
	}
	s.reset(4)
	if _, err := s.Write(append(append([]byte(nil), frameMagic...), 5, 0, 0, 0, 0, 0, 0, 0)); err == nil || !s.overflow {
		t.Fatal("oversized frame accepted")
	}
}

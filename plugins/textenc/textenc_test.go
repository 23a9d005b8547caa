package textenc

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	xunicode "golang.org/x/text/encoding/unicode"

	"github.com/agenthost/agenthost/host/figure"
)

// sample is one legacy-encoded text of the test set and the text it holds.
type sample struct {
	name string
	raw  []byte
	want string
}

// sections splits a "## Heading" file into its sections' bodies.
func sections(t testing.TB, file string) map[string]string {
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for part := range strings.SplitSeq(string(b), "\n## ") {
		head, body, _ := strings.Cut(part, "\n")
		lang, _, _ := strings.Cut(strings.TrimPrefix(head, "## "), " ")
		out[lang] = strings.TrimSpace(body)
	}
	return out
}

// testSet builds the set: real text in several languages (testdata, see
// MANIFEST) encoded with x/text in the encodings its language was written
// in, whole and as a short first paragraph, plus x/text's own real legacy
// files.
func testSet(t testing.TB) []sample {
	secs := sections(t, "multilingual-utf-8.txt")
	for k, v := range sections(t, "central-european-utf-8.txt") {
		secs[k] = v
	}
	byLang := []struct {
		lang string
		encs []string
	}{
		{"English", []string{"windows-1252"}},
		{"French", []string{"windows-1252"}},
		{"German", []string{"windows-1252"}},
		{"Polish", []string{"windows-1250"}},
		{"Czech", []string{"windows-1250"}},
		{"Turkish", []string{"windows-1254"}},
		{"Russian", []string{"windows-1251", "koi8-r", "ibm866", "utf-16le"}},
		{"Ukrainian", []string{"windows-1251", "koi8-u"}},
		{"Greek", []string{"windows-1253"}},
		{"Hebrew", []string{"windows-1255"}},
		{"Arabic", []string{"windows-1256", "utf-16be"}},
		{"Thai", []string{"windows-874"}},
		{"Chinese", []string{"gb18030"}},
		{"Japanese", []string{"shift_jis", "euc-jp"}},
		{"Korean", []string{"euc-kr"}},
	}
	var set []sample
	for _, l := range byLang {
		text, ok := secs[l.lang]
		if !ok {
			t.Fatalf("no %s section in the test texts", l.lang)
		}
		// The sample's own Latin asides (names, numbers) stay; emoji and
		// other characters the code page lacks are dropped first.
		for _, name := range l.encs {
			enc := encodingFor(name)
			keep := encodable(text, enc)
			short := firstParagraph(keep, 300)
			line := firstWords(keep, 80)
			for _, v := range []struct{ kind, s string }{{"whole", keep}, {"short", short}, {"line", line}} {
				raw, err := enc.NewEncoder().Bytes([]byte(v.s))
				if err != nil {
					t.Fatalf("%s in %s: %v", l.lang, name, err)
				}
				set = append(set, sample{name: fmt.Sprintf("%s/%s/%s", l.lang, name, v.kind), raw: raw, want: v.s})
			}
		}
	}
	real := []struct{ file, utf8, enc string }{
		{"candide-windows-1252.txt", "", "windows-1252"},
		{"rashomon-shift-jis.txt", "", "shift_jis"},
		{"rashomon-euc-jp.txt", "", "euc-jp"},
		{"sunzi-bingfa-simplified-gbk.txt", "", "gbk"},
		{"sunzi-bingfa-traditional-big5.txt", "sunzi-bingfa-traditional-utf-8.txt", "big5"},
		{"unsu-joh-eun-nal-euc-kr.txt", "", "euc-kr"},
		{"candide-utf-16le.txt", "", "utf-16le"},
	}
	for _, r := range real {
		raw, err := os.ReadFile("testdata/" + r.file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodingFor(r.enc).NewDecoder().Bytes(raw)
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, sample{name: "real/" + r.file, raw: raw, want: string(want)})
	}
	return set
}

func encodingFor(name string) encoding.Encoding {
	switch name {
	case "utf-16le":
		return xunicode.UTF16(xunicode.LittleEndian, xunicode.IgnoreBOM)
	case "utf-16be":
		return xunicode.UTF16(xunicode.BigEndian, xunicode.IgnoreBOM)
	case "gbk":
		return simplifiedchinese.GBK
	case "gb18030":
		return simplifiedchinese.GB18030
	case "big5":
		return traditionalchinese.Big5
	case "shift_jis":
		return japanese.ShiftJIS
	case "euc-jp":
		return japanese.EUCJP
	case "euc-kr":
		return korean.EUCKR
	case "ibm866":
		return charmap.CodePage866
	}
	return Lookup(name)
}

// encodable keeps the runes of s that enc can write.
func encodable(s string, enc encoding.Encoding) string {
	var b strings.Builder
	for _, r := range s {
		if _, err := enc.NewEncoder().String(string(r)); err == nil {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// firstParagraph is the start of s up to a paragraph break past n bytes.
func firstParagraph(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.Index(s[n:], "\n"); i >= 0 {
		return s[:n+i]
	}
	return s
}

// firstWords is the start of s up to the first space past n bytes (a
// subject line, a file name).
func firstWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.IndexAny(s[n:], " \n"); i >= 0 {
		return s[:n+i]
	}
	return s
}

// decodedRight: the decoded text equals what was encoded.
func decodedRight(s sample) (bool, string) {
	got, enc := Decode(s.raw, "")
	return got == s.want, enc
}

// TestDetectTestSet: the detector reads the test set right. Before this
// package the text extractors read any non-UTF-8 text as Windows-1252.
func TestDetectTestSet(t *testing.T) {
	set := testSet(t)
	wrong := 0
	for _, s := range set {
		if ok, enc := decodedRight(s); !ok {
			wrong++
			t.Logf("%s: read as %s", s.name, enc)
		}
	}
	// Every whole text must be right; a short paragraph may be taken
	// for a sibling code page now and then.
	for _, s := range set {
		if !strings.HasSuffix(s.name, "/whole") && !strings.HasPrefix(s.name, "real/") {
			continue
		}
		if ok, enc := decodedRight(s); !ok {
			t.Errorf("%s: read as %s", s.name, enc)
		}
	}
	if share := 1 - float64(wrong)/float64(len(set)); share < 0.9 {
		t.Errorf("%d of %d samples decoded wrong (%.2f right)", wrong, len(set), share)
	}
}

// BenchmarkDetect prints text.encodings.detected, the share of the test
// set decoded right.
func BenchmarkDetect(b *testing.B) {
	set := testSet(b)
	right := 0
	for b.Loop() {
		right = 0
		for _, s := range set {
			if ok, _ := decodedRight(s); ok {
				right++
			}
		}
	}
	figure.Report("text.encodings.detected", float64(right)/float64(len(set)), "share")
}

// TestDeclaredCharset: a label is trusted when the bytes agree, not when
// they contradict it.
func TestDeclaredCharset(t *testing.T) {
	arabic := sections(t, "multilingual-utf-8.txt")["Arabic"]
	arabic = encodable(arabic, charmap.Windows1256)
	raw, _ := charmap.Windows1256.NewEncoder().Bytes([]byte(arabic))
	latin1, _ := charmap.Windows1252.NewEncoder().Bytes([]byte("Façade, naïve café — déjà vu"))
	cases := []struct {
		name     string
		raw      []byte
		declared string
		want     string
		enc      string
	}{
		{"Windows-1256 labelled UTF-8", raw, "utf-8", arabic, "windows-1256"},
		{"Windows-1256 labelled right", raw, "windows-1256", arabic, "windows-1256"},
		{"Latin-1 label on Windows-1252", latin1, "iso-8859-1", "Façade, naïve café — déjà vu", "windows-1252"},
		{"UTF-8 labelled UTF-8", []byte("Grüße"), "UTF-8", "Grüße", "utf-8"},
		{"UTF-8 labelled Windows-1251", []byte("Привет, мир"), "windows-1251", "Привет, мир", "utf-8"},
		{"unknown label", []byte("plain"), "x-no-such", "plain", "utf-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, enc := Decode(c.raw, c.declared)
			if got != c.want || enc != c.enc {
				t.Errorf("got %q as %s, want %q as %s", trunc(got), enc, trunc(c.want), c.enc)
			}
		})
	}
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60]
	}
	return s
}

// TestUTF7: UTF-7 (RFC 2152) is decoded when a text is labelled so, as
// Python's codec writes it and as RFC 2152's examples have it; before, the
// label named no encoding and the text stayed "Gr+APwA3w-e".
func TestUTF7(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Gr+APwA3w-e aus Z+APw-rich", "Grüße aus Zürich"},
		{"Hi Mom -+Jjo--!", "Hi Mom -☺-!"}, // RFC 2152
		{"+ZeVnLIqe-", "日本語"},              // RFC 2152
		{"A+ImIDkQ.", "A≢Α."},              // RFC 2152: a run ended by a non-base64 character
		{"1 +- 1 = 2", "1 + 1 = 2"},        // "+-" is "+"
		{"emoji +2D3eAA-", "emoji 😀"},      // a surrogate pair
		{"Preis 25 +IKw +IBM +AKE-ol+AOk!", "Preis 25 € – ¡olé!"},
	} {
		got, used := Decode([]byte(c.in), "UTF-7")
		if got != c.want || used != "utf-7" {
			t.Errorf("Decode(%q, utf-7) = %q, %q; want %q", c.in, got, used, c.want)
		}
	}
	if got, used := Decode([]byte("caf\xc3\xa9"), "utf-7"); used == "utf-7" {
		t.Errorf("8-bit bytes labelled utf-7 were read as utf-7: %q", got)
	}
}

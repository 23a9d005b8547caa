//go:build !wasip1

// The plugin host and the store run natively; this test drives the built
// plugin through them.

package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"unicode"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// scriptDoc is a document of one script: a title, a heading, a paragraph
// long enough to wrap, a list and a table.
func scriptDoc(title, heading, para string, items []string, rows [][]string) GenerateArgs {
	return GenerateArgs{Format: "pdf", Title: title, FileName: "script", Blocks: []Block{
		{Type: "heading", Text: heading, Level: 1},
		{Type: "paragraph", Text: para},
		{Type: "list", Items: items},
		{Type: "table", Rows: rows},
	}}
}

// compare is how a script's text is compared with what pdftotext reads:
// by words; with whitespace removed (Chinese and Japanese, where a line
// break adds a newline between characters); or by letters only
// (right-to-left scripts, where poppler puts punctuation at a word's
// other side and marks runs with bidi controls).
type compare int

const (
	byWords compare = iota
	byCharacters
	byLetters
)

func (c compare) norm(s string) string {
	switch c {
	case byCharacters:
		return strings.Join(strings.Fields(s), "")
	case byLetters:
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return -1
		}, s)
	}
	return norm(s)
}

func pdftotext(t *testing.T, data []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Fatal("pdftotext (poppler-utils) is missing: .ci/testdeps installs it")
	}
	cmd := exec.Command("pdftotext", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// TestPDFScripts: a document in each script the embedded fonts cover is a
// valid PDF whose text pdftotext reads back (right-to-left text in logical
// order), that carries only the glyphs it uses, with no '?' and no note.
// The sizes measured when this was written are in the comments.
func TestPDFScripts(t *testing.T) {
	e := newEnv(t, "docgen")
	tests := []struct {
		name    string
		doc     GenerateArgs
		cmp     compare
		maxSize int
		// ours: our own pdftext reads the text back too (it does not
		// reorder right-to-left text).
		ours bool
	}{
		{"German", scriptDoc("Grüße aus München", "Übersicht für Köln",
			"Äpfel, Öl und Übermaß: ça coûte 12 € — die Straße führt über die Brücke, während die Bäckerei schon um sechs Uhr öffnet und frische Brötchen verkauft.",
			[]string{"Größe prüfen", "Maße übernehmen"}, [][]string{{"Stadt", "Umsatz €"}, {"Zürich", "1 200 €"}, {"Düsseldorf", "800 €"}}),
			byWords, 30_000, true}, // 19.3 KB
		{"Greek", scriptDoc("Καλημέρα κόσμε", "Περίληψη της αναφοράς",
			"Η ελληνική γλώσσα είναι μία από τις αρχαιότερες γλώσσες του κόσμου, και το αλφάβητό της χρησιμοποιείται αδιάκοπα εδώ και σχεδόν τρεις χιλιάδες χρόνια.",
			[]string{"Πρώτο σημείο", "Δεύτερο σημείο"}, [][]string{{"Πόλη", "Πληθυσμός"}, {"Αθήνα", "664046"}, {"Θεσσαλονίκη", "325182"}}),
			byWords, 30_000, true}, // 16.9 KB
		{"Russian", scriptDoc("Привет, мир", "Краткое содержание",
			"Съешь же ещё этих мягких французских булок да выпей чаю: эта фраза содержит все буквы русского алфавита и часто используется для проверки шрифтов.",
			[]string{"Первый пункт", "Второй пункт"}, [][]string{{"Город", "Население"}, {"Москва", "13010112"}, {"Санкт-Петербург", "5601911"}}),
			byWords, 30_000, true}, // 17.2 KB
		{"Chinese", scriptDoc("你好，世界", "报告摘要",
			"北京是中华人民共和国的首都，也是全国的政治、文化和国际交往中心。这座城市有三千多年的建城史，拥有众多的名胜古迹，例如故宫、天坛和长城。",
			[]string{"第一项：预算审查", "第二项：董事会投票"}, [][]string{{"城市", "收入"}, {"上海", "1200"}, {"广州", "800"}}),
			byCharacters, 30_000, true}, // 16.8 KB
		{"Japanese", scriptDoc("こんにちは世界", "報告書の概要",
			"東京は日本の首都であり、世界で最も人口の多い都市圏の一つです。ひらがなとカタカナと漢字を組み合わせて書きます。会議は来週の月曜日に行われます。",
			[]string{"予算の見直し", "取締役会の投票"}, [][]string{{"都市", "売上"}, {"大阪", "1200"}, {"名古屋", "800"}}),
			byCharacters, 30_000, true}, // 16.6 KB
		{"Korean", scriptDoc("안녕하세요 세계", "보고서 요약",
			"서울은 대한민국의 수도이며 가장 큰 도시입니다. 한글은 세종대왕이 만든 문자로, 배우기 쉽고 과학적인 글자로 널리 알려져 있습니다.",
			[]string{"예산 검토", "이사회 투표"}, [][]string{{"도시", "매출"}, {"부산", "1200"}, {"인천", "800"}}),
			byWords, 30_000, true}, // 16.7 KB
		{"Hebrew", scriptDoc("שלום עולם", "סיכום הדוח",
			"ירושלים היא בירת ישראל והעיר הגדולה ביותר במדינה. העברית נכתבת מימין לשמאל, והמסמך הזה בודק שהטקסט נשמר גם בקובץ PDF.",
			[]string{"בדיקת התקציב", "הצבעת ההנהלה"}, [][]string{{"עיר", "הכנסות"}, {"חיפה", "1200"}, {"אילת", "800"}}),
			byLetters, 30_000, false}, // 13.9 KB
		{"Arabic", scriptDoc("مرحبا بالعالم", "ملخص التقرير",
			"القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها. تكتب اللغة العربية من اليمين إلى اليسار، وتتصل حروفها بعضها ببعض داخل الكلمة الواحدة.",
			[]string{"مراجعة الميزانية", "تصويت المجلس"}, [][]string{{"مدينة", "الإيرادات"}, {"الإسكندرية", "1200"}, {"الجيزة", "800"}}),
			byLetters, 30_000, false}, // 15.7 KB
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, data := generate(t, e, tc.doc)
			t.Logf("%s: %d bytes", tc.name, len(data))
			conf := model.NewDefaultConfiguration()
			conf.ValidationMode = model.ValidationStrict
			if err := api.Validate(bytes.NewReader(data), conf); err != nil {
				t.Errorf("pdfcpu refuses the PDF: %v", err)
			}
			if len(data) > tc.maxSize {
				t.Errorf("%d bytes, over %d: the fonts are not subset", len(data), tc.maxSize)
			}
			if res.Note != "" || strings.Contains(res.Summary, "'?'") {
				t.Errorf("a note for a script the fonts cover: %q", res.Note)
			}
			paras, cells := texts(tc.doc)
			for _, row := range cells {
				paras = append(paras, row...)
			}
			got := pdftotext(t, data)
			if strings.Contains(got, "?") {
				t.Errorf("pdftotext reads a '?': %q", got)
			}
			all := tc.cmp.norm(got)
			for _, p := range paras {
				if !strings.Contains(all, tc.cmp.norm(p)) {
					t.Errorf("pdftotext: %q not read back in order from:\n%s", p, got)
				}
			}
			if !tc.ours {
				return
			}
			ours := pdfText(t, data)
			for _, p := range paras {
				if !strings.Contains(tc.cmp.norm(ours), tc.cmp.norm(p)) {
					t.Errorf("pdftext: %q not read back in order from:\n%s", p, ours)
				}
			}
		})
	}
}

// TestPDFMissingGlyphs: characters no embedded font has (an emoji, a
// private-use character) are written as '?' and the result names them;
// the text around them is kept.
func TestPDFMissingGlyphs(t *testing.T) {
	e := newEnv(t, "docgen")
	tests := []struct {
		name, text string
		n          int
		examples   string
	}{
		{"emoji", "Gut gemacht 🦄 und weiter 🚀", 2, "🦄🚀"},
		{"private use", "Zeichen \ue000 hier", 1, "\ue000"},
		{"emoji with a variation selector", "Herz ❤️ ok", 0, ""}, // DejaVu has U+2764; U+FE0F draws nothing
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, data := generate(t, e, GenerateArgs{Format: "pdf", FileName: "missing", Blocks: []Block{{Type: "paragraph", Text: tc.text}}})
			if tc.n == 0 {
				if res.Note != "" {
					t.Fatalf("note %q for covered characters", res.Note)
				}
				return
			}
			want := itoa(tc.n) + " characters have no glyph"
			if !strings.Contains(res.Note, want) || !strings.Contains(res.Note, fmt.Sprintf("%q", tc.examples)) || !strings.Contains(res.Summary, res.Note) {
				t.Fatalf("note %q, want %q naming %q", res.Note, want, tc.examples)
			}
			got := norm(pdftotext(t, data))
			words := strings.Fields(tc.text)
			if !strings.Contains(got, words[0]) || strings.Count(got, "?") != tc.n {
				t.Fatalf("pdftotext read %q, want the words and %d '?'", got, tc.n)
			}
		})
	}
}

package pdftext

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/encoding/charmap"
	unorm "golang.org/x/text/unicode/norm"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/internal/testcorpus"
)

// The classes of text that extraction used to lose (issue 16): real
// documents of each class sit in testdata/corpus/pdf/classes with
// pdftotext -layout's pages beside them (NAME.pages/NNNN.txt), and the
// recall of poppler's words is measured where poppler is right: words in
// which it printed a control character (a glyph it could not map) are left
// out, and typographic quotes are folded, since poppler prints TeX's
// quotes as ASCII ones.

// classDocs are the documents of a class.
func classDocs(class string) []string {
	switch class {
	case "type3":
		return []string{"type3-ctib4tex-p1-3", "type3-xkeyval-p4-6"}
	case "rtl":
		return []string{"rtl-sexam-exam-ar-DZ", "rtl-arabi-samplebook", "rtl-cjhebrew", "rtl-quran-ur-test", "rtl-urdu-nastaliq-lo",
			"rtl-urdu-nastaliq-sil-typesample-p5-6", "rtl-urdu-nastaliq-cairo"}
	}
	return nil
}

// foldWord normalises a word for comparison: NFKC (presentation forms,
// ligatures) and ASCII quotes.
func foldWord(w string) string {
	w = unorm.NFKC.String(w)
	return strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`).Replace(w)
}

// pageWords are the words of a text, folded; with reference set, words
// poppler did not read are dropped.
func pageWords(text string, reference bool) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		if reference && strings.ContainsFunc(w, func(r rune) bool {
			return unicode.IsControl(r) || r == unicode.ReplacementChar || unicode.Is(unicode.Co, r)
		}) {
			continue
		}
		out = append(out, foldWord(w))
	}
	return out
}

// wordRecall is the share of want's words (as a multiset) found in got.
func wordRecall(got, want []string) (hits, total int) {
	have := map[string]int{}
	for _, w := range got {
		have[w]++
	}
	for _, w := range want {
		if have[w] > 0 {
			have[w]--
			hits++
		}
	}
	return hits, len(want)
}

// classRecall extracts every page of the class's documents and returns the
// recall of the reference words, over all documents, and per document.
func classRecall(tb testing.TB, class string, text func(d *Document, n int) string) (float64, map[string]float64) {
	tb.Helper()
	dir := testcorpus.Path(tb, "pdf", "classes")
	per := map[string]float64{}
	var hits, total int
	for _, name := range classDocs(class) {
		data, err := os.ReadFile(filepath.Join(dir, name+".pdf"))
		if err != nil {
			tb.Fatal(err)
		}
		d, err := Open(bytes.NewReader(data))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		ref := referencePages(dir, name)
		if len(ref) != d.PageCount() {
			tb.Fatalf("%s: %d pages, %d reference pages", name, d.PageCount(), len(ref))
		}
		var h, n int
		for i, want := range ref {
			a, b := wordRecall(pageWords(text(d, i+1), false), pageWords(want, true))
			h, n = h+a, n+b
		}
		per[name] = float64(h) / float64(max(n, 1))
		hits, total = hits+h, total+n
	}
	return float64(hits) / float64(max(total, 1)), per
}

func pageTextOf(tb testing.TB) func(d *Document, n int) string {
	return func(d *Document, n int) string {
		s, err := d.PageText(n)
		if err != nil {
			tb.Fatalf("page %d: %v", n, err)
		}
		return s
	}
}

// classText is the text of one page of a class document.
func classText(t *testing.T, name string, page int) string {
	t.Helper()
	data := testcorpus.Read(t, "pdf", "classes", name+".pdf")
	return pageText(t, data, page)
}

// TestType3Documents: pdfTeX's bitmap fonts (glyphs named /a0../a255, the
// codes of the EC fonts' T1 encoding) and Ghostscript's bitmap fonts (a
// FontMatrix of 1/75 and a font size that is not the text's) give their
// text, with word spaces.
func TestType3Documents(t *testing.T) {
	for _, c := range []struct {
		name string
		page int
		want []string
	}{
		{"type3-ctib4tex-p1-3", 1, []string{
			"is a package offering Tibetan support for",
			"This package is based on earlier works by Schwartz, Sparkes, Sirlin,",
			"effectively eliminating the need for installing any external preprocessor",
		}},
		{"type3-ctib4tex-p1-3", 2, []string{"“non-TEX-ish” code constructs", "Latin–Tibetan con-"}},
		{"type3-ctib4tex-p1-3", 3, []string{"Some Technical Notes", "Norbert Preining’s work;"}},
		{"type3-xkeyval-p4-6", 2, []string{
			"together with the extra prefix cmd, will be used to create",
			`\define@key{fam}{key}[none]{\def\cmdKV@fam@key{#1}value: \cmdKV@fam@key}`,
			"The value none is again the default value",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := words(classText(t, c.name, c.page))
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("page %d lacks %q:\n%s", c.page, w, got)
				}
			}
		})
	}
	recall, per := classRecall(t, "type3", pageTextOf(t))
	t.Logf("type 3 recall %.4f %v", recall, per)
	if recall < 0.95 {
		t.Errorf("type 3 recall %.4f < 0.95", recall)
	}
}

// BenchmarkType3Recall: the recall of poppler's words (where poppler is
// right) on documents set in Type 3 bitmap fonts.
func BenchmarkType3Recall(b *testing.B) {
	for range b.N {
		r, per := classRecall(b, "type3", pageTextOf(b))
		figure.Report("pdf.text.type3.recall", r, "ratio")
		b.Logf("per document: %v", per)
	}
}

// genesis is Genesis 1:1-2 as the cjhebrew manual sets it (its example,
// checked against the Hebrew text: the manual leaves out the furtive
// patah of וְרוּחַ): the reference of the Hebrew document, whose text
// poppler splits at every final letter.
const genesis = "בְּרֵאשִׁית בָּרָא אֱלֹהִים אֵת הַשָּׁמַיִם וְאֵת הָאָרֶץ׃ וְהָאָרֶץ הָיְתָה תֹהוּ וָבֹהוּ וְחֹשֶׁךְ " +
	"עַל־פְּנֵי תְהוֹם וְרוּח אֱלֹהִים מְרַחֶפֶת עַל־פְּנֵי הַמָּיִם׃"

// rtlWords are the words of right-to-left scripts in a text, in the order
// they are written, NFKC-normalised, without tatweel.
func rtlWords(text string) []string {
	text = strings.ReplaceAll(unorm.NFKC.String(text), "\u0640", "")
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 0x0591 && r <= 0x05F4 || r >= 0x0610 && r <= 0x06FF && r != 0x060C && r != 0x061B && r != 0x061F && r != 0x066A && r != 0x066B && r != 0x066C)
	})
}

// rtlReference is a right-to-left document's words as its author wrote
// them: the Arabic and Urdu of its LaTeX source (comments dropped; decoded
// from windows-1256 for arabi's sample; for quran-ur's test the package's
// data lines the test prints), the text a document was set from (the ODF
// a LibreOffice document was made from, pango-view's input), or the
// Hebrew verse.
func rtlReference(tb testing.TB, name string) []string {
	tb.Helper()
	if name == "rtl-cjhebrew" {
		return rtlWords(genesis)
	}
	if _, err := os.Stat(testcorpus.Path(tb, "pdf", "classes", name+".source.txt")); err == nil {
		// The text a document was set from (pango-view's input, the text
		// of SIL's ODF), a paragraph a line.
		return rtlWords(string(testcorpus.Read(tb, "pdf", "classes", name+".source.txt")))
	}
	if strings.HasSuffix(name, "-lo") { // made with LibreOffice: its flat ODF source holds no other Arabic script
		return rtlWords(string(testcorpus.Read(tb, "pdf", "classes", name+".source.fodt")))
	}
	src := testcorpus.Read(tb, "pdf", "classes", name+".source.tex")
	if name == "rtl-arabi-samplebook" {
		var err error
		if src, err = charmap.Windows1256.NewDecoder().Bytes(src); err != nil {
			tb.Fatal(err)
		}
	}
	var sb strings.Builder
	for line := range strings.SplitSeq(string(src), "\n") {
		for i := 0; i < len(line); i++ {
			if line[i] == '%' && (i == 0 || line[i-1] != '\\') {
				line = line[:i]
				break
			}
		}
		sb.WriteString(line + "\n")
	}
	return rtlWords(sb.String())
}

// rtlRecall is the share of the reference's distinct words found, whole
// and in logical order, in the extracted text.
func rtlRecall(tb testing.TB) (float64, map[string]float64) {
	tb.Helper()
	per := map[string]float64{}
	var hits, total int
	for _, name := range classDocs("rtl") {
		d, err := Open(bytes.NewReader(testcorpus.Read(tb, "pdf", "classes", name+".pdf")))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		got := map[string]bool{}
		for n := 1; n <= d.PageCount(); n++ {
			s, err := d.PageText(n)
			if err != nil {
				tb.Fatalf("%s page %d: %v", name, n, err)
			}
			for _, w := range rtlWords(s) {
				got[w] = true
			}
		}
		want := map[string]bool{}
		for _, w := range rtlReference(tb, name) {
			want[w] = true
		}
		h := 0
		for w := range want {
			if got[w] {
				h++
			}
		}
		per[name] = float64(h) / float64(max(len(want), 1))
		hits, total = hits+h, total+len(want)
	}
	return float64(hits) / float64(max(total, 1)), per
}

// TestRTLDocuments: Arabic (XeLaTeX with ToUnicode; pdfTeX's arabi), Urdu
// (XeLaTeX, quran-ur's eight translations in two columns) and Hebrew
// (cjhebrew: glyph names, no ToUnicode) come out in logical order.
func TestRTLDocuments(t *testing.T) {
	for _, c := range []struct {
		name string
		page int
		want []string
	}{
		{"rtl-sexam-exam-ar-DZ", 1, []string{
			"ثانوية الدكتور أحمد عروة", "السنة الدراسية: 2018-2017", "امتحان الفصل الأول مادة الرياضيات",
			"الشعبة: سنة ثالثة تسيير واقتصاد", "التمرين الأول: (6 نقاط)",
		}},
		{"rtl-arabi-samplebook", 5, []string{
			"في هذا الشهر، يحتفل العالم العربي بالذكرى المئوية لمولد توفيق الحكيم",
			"في باريس (١٩٢٤ - ١٩٢٨ )",
		}},
		{"rtl-cjhebrew", 3, []string{rtlLine(genesis, 14)}},
		{"rtl-quran-ur-test", 1, []string{
			"شروع الله کا نام لے کر جو بڑا مہربان نہایت رحم والا ہے", "نہ اس کی کوئی اولاد ہے اور نہ وہ کسی کی اولاد ہے",
			"اور اس کے برابر کا کوئی نہیں ہے",
		}},
		{"rtl-quran-ur-test", 2, []string{"یہ وہ کتاب ہے جس میں کوئی بھی شک نہیں", "وہی لوگ اپنے رب کے راستہ پر ہیں اور وہی نجات پانے والے ہیں"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := words(strings.ReplaceAll(unorm.NFKC.String(classText(t, c.name, c.page)), "\u0640", ""))
			for _, w := range c.want {
				if !strings.Contains(got, words(unorm.NFKC.String(w))) {
					t.Errorf("page %d lacks %q:\n%s", c.page, w, got)
				}
			}
		})
	}
	recall, per := rtlRecall(t)
	t.Logf("right-to-left recall %.4f %v", recall, per)
	if recall < 0.95 {
		t.Errorf("right-to-left recall %.4f < 0.95", recall)
	}
}

// TestNastaliqUrdu: Urdu and Saraiki set in Nastaliq (Awami Nastaliq in
// LibreOffice 7.4 and 7.0 PDF exports, drawn from the left, and by
// pango and cairo, drawn from the right), whose letters climb on a slope,
// sit over one another and stand apart where their calligraphy puts them,
// come out word for word in logical order, within their lines: the drawn
// spaces say where words end (see spacedFonts), and the letters that a
// subset font's ToUnicode leaves out come from their ActualText.
func TestNastaliqUrdu(t *testing.T) {
	for _, c := range []struct {
		name string
		page int
		want []string
	}{
		{"rtl-urdu-nastaliq-lo", 1, []string{
			"اردو پاکستان کی قومی زبان ہے۔ یہ زبان برصغیر میں کروڑوں لوگ بولتے اور سمجھتے ہیں۔",
			"لاہور اور کراچی پاکستان کے بڑے شہر ہیں۔ پہاڑوں کے گلیشیئر پگھل رہے ہیں اور دریاؤں",
			"میں پانی کم ہو رہا ہے۔",
		}},
		{"rtl-urdu-nastaliq-sil-typesample-p5-6", 1, []string{
			"اقوامِ متحدہ کی جنرل اسمبلی نے",
			"کیا۔ اگلے صفحات پر اس منشور کا مکمل متن درج ہے۔ اس تاریخی کارنامے کے بعد اسمبلی نے اپنے تمام ممبر ممالک پر",
			"نمایاں مقامات پر آویزاں کیا جایٔے۔ اور خاص طور پر اسکولوں اور تعلیمی اداروں میں اسے پڑھ کر سنایا جایٔے اور اس",
		}},
		{"rtl-urdu-nastaliq-cairo", 1, []string{
			"اردو پاکستان کی قومی زبان ہے۔ یہ زبان برصغیر میں کروڑوں لوگ بولتے اور",
			"لاہور اور کراچی پاکستان کے بڑے شہر ہیں۔ پہاڑوں کے گلیشیئر پگھل",
			"رہے ہیں اور دریاؤں میں پانی کم ہو رہا ہے۔",
		}},
		{"rtl-urdu-nastaliq-sil-typesample-p5-6", 2, []string{
			"دنیا دے سارے انسان ہکو ڄئے تے نہ مکڻ والے حقوق تے ازادیاں گھن تے پیدا تھیڈن۔ اقوام متحدہ نے ہر کہیں",
			"منشور اچ اقوام متحدہ نے صاف تے سادہ لفظاں اچ حقوق ڋساڋتن ۔ جنباں وچ ہر کوئی برابر داشر یک ہے۔",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := classText(t, c.name, c.page)
			lines := strings.Split(unorm.NFKC.String(got), "\n")
			for _, w := range c.want {
				w = " " + words(unorm.NFKC.String(w)) + " "
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(" "+words(l)+" ", w) }) {
					t.Errorf("page %d: no line holds %q:\n%s", c.page, w, got)
				}
			}
		})
	}
	// A number is drawn from the left inside a line drawn from the left,
	// whichever side its space lies on.
	if got := classText(t, "rtl-urdu-nastaliq-sil-typesample-p5-6", 1); !strings.Contains(got, "۱۹۴۸") || strings.Contains(got, "۸۴۹۱") {
		t.Errorf("the year 1948 is not ۱۹۴۸:\n%s", got)
	}
	_, per := rtlRecall(t)
	for _, name := range []string{"rtl-urdu-nastaliq-lo", "rtl-urdu-nastaliq-sil-typesample-p5-6", "rtl-urdu-nastaliq-cairo"} {
		if r := per[name]; r < 0.95 {
			t.Errorf("%s: Nastaliq recall %.3f < 0.95", name, r)
		}
	}
}

// rtlLine is the first n words of s.
func rtlLine(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// BenchmarkRTLRecall: the share of the Arabic and Hebrew words of the
// documents' sources found in logical order.
func BenchmarkRTLRecall(b *testing.B) {
	for range b.N {
		r, per := rtlRecall(b)
		figure.Report("pdf.text.rtl.recall", r, "ratio")
		b.Logf("per document: %v", per)
	}
}

// TestDamagedClassFiles: the class documents truncated and corrupted give
// errors or results from every new reader (forms, attachments, page
// status), never a panic.
func TestDamagedClassFiles(t *testing.T) {
	paths := testcorpus.Glob(t, "pdf", "classes", "*.pdf")
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var variants [][]byte
		for _, frac := range []int{35, 90} {
			variants = append(variants, data[:len(data)*frac/100])
		}
		for seed := range 3 {
			c := bytes.Clone(data)
			for k := range 40 {
				i := (seed*7919 + k*104729) % len(c)
				c[i] = byte(seed*31 + k*17)
			}
			variants = append(variants, c)
		}
		for _, v := range variants {
			d, err := Open(bytes.NewReader(v))
			if err != nil {
				continue
			}
			for p := 1; p <= min(d.PageCount(), 2); p++ {
				_, _ = d.Page(p)
			}
			_, _ = d.FormFields()
			atts, _ := d.Attachments()
			for _, a := range atts {
				_, _, _ = a.Data(1 << 20)
			}
			var info PageInfo
			d.sketchPage(1, &info)
		}
	}
}

// Package textenc turns text of unknown or doubtful encoding into UTF-8: a
// byte-order mark decides first, then a declared charset (an HTTP or MIME
// header, an HTML meta tag) when the bytes bear it out, then detection: a
// small scored detector over the legacy encodings people still send
// (Shift-JIS, EUC-JP, GB18030, Big5, EUC-KR, Windows-1250 to 1258, KOI8-R
// and KOI8-U, IBM 866) and UTF-16 without a byte-order mark.
//
// The detector decodes the bytes with each candidate (golang.org/x/text)
// and scores what comes out: invalid sequences and control characters cost,
// letters of one script earn, a capital in the middle of a lower-case word
// costs (KOI8 and Windows-1251 swap the cases), and CJK characters earn by
// how common they are, read from the encodings' own frequency-ordered
// levels (GB2312 level 1, Big5's frequent block, JIS X 0208 level 1, the
// KS X 1001 syllables). It is pure Go and has no tables of its own beyond
// x/text's, so it runs in the Wasm sandbox.
package textenc

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
	xunicode "golang.org/x/text/encoding/unicode"
)

// sampleBytes is how much of a text detection looks at: enough for a
// stable score, little enough that it costs nothing on a large file.
const sampleBytes = 16 << 10

// candidate is one legacy encoding the detector tries.
type candidate struct {
	name string
	enc  encoding.Encoding
	cjk  bool
}

// candidates are tried in this order; on a tie the earlier wins, so the
// most common encoding of a family comes first.
var candidates = []candidate{
	{"windows-1252", charmap.Windows1252, false},
	{"windows-1250", charmap.Windows1250, false},
	{"windows-1251", charmap.Windows1251, false},
	{"koi8-r", charmap.KOI8R, false},
	{"koi8-u", charmap.KOI8U, false},
	{"ibm866", charmap.CodePage866, false},
	{"windows-1253", charmap.Windows1253, false},
	{"windows-1254", charmap.Windows1254, false},
	{"windows-1255", charmap.Windows1255, false},
	{"windows-1256", charmap.Windows1256, false},
	{"windows-1257", charmap.Windows1257, false},
	{"windows-1258", charmap.Windows1258, false},
	{"windows-874", charmap.Windows874, false},
	{"shift_jis", japanese.ShiftJIS, true},
	{"euc-jp", japanese.EUCJP, true},
	{"gb18030", simplifiedchinese.GB18030, true},
	{"big5", traditionalchinese.Big5, true},
	{"euc-kr", korean.EUCKR, true},
}

// Lookup returns the encoding of a charset label (WHATWG names and their
// aliases, as browsers and mail programs use them), or nil.
func Lookup(label string) encoding.Encoding {
	label = strings.ToLower(strings.Trim(strings.TrimSpace(label), `"'`))
	switch label {
	case "", "utf8":
		if label == "utf8" {
			return xunicode.UTF8
		}
		return nil
	case "cp866", "866", "ibm-866":
		return charmap.CodePage866
	case "x-mac-cyrillic":
		return charmap.MacintoshCyrillic
	case "utf-7", "utf7", "unicode-1-1-utf-7", "csunicode11utf7", "x-unicode-2-0-utf-7":
		return UTF7
	}
	e, err := htmlindex.Get(label)
	if err != nil {
		return nil
	}
	return e
}

// candidateOf is e's candidate, nil for another encoding.
func candidateOf(e encoding.Encoding) *candidate {
	for i := range candidates {
		if candidates[i].enc == e {
			return &candidates[i]
		}
	}
	return nil
}

// Name is the canonical name of an encoding ("" when unknown).
func Name(e encoding.Encoding) string {
	if e == nil {
		return ""
	}
	for _, c := range candidates {
		if c.enc == e {
			return c.name
		}
	}
	if e == UTF7 {
		return "utf-7"
	}
	if n, err := htmlindex.Name(e); err == nil {
		return n
	}
	return ""
}

// Decode returns b as valid UTF-8 and the encoding it was read in.
// declared is a charset label the text came with ("" for none); it is
// trusted only when the bytes decode under it as well as under the best
// detected encoding, so a page labelled UTF-8 that is really Windows-1256
// is read as Windows-1256.
func Decode(b []byte, declared string) (text, used string) {
	if t, n, ok := byBOM(b); ok {
		return t, n
	}
	if d := Lookup(declared); d != nil && plausible(b, d) {
		return decodeWith(b, d), nameOr(d, declared)
	}
	e, n := Detect(b)
	return decodeWith(b, e), n
}

// nameOr is the encoding's name, or the label it was found by.
func nameOr(e encoding.Encoding, label string) string {
	if n := Name(e); n != "" {
		return n
	}
	return strings.ToLower(label)
}

// plausible: the declared encoding is kept unless the bytes contradict it
// (invalid sequences where another encoding reads them cleanly, or a clearly
// better score).
func plausible(b []byte, d encoding.Encoding) bool {
	s := b[:min(len(b), sampleBytes)]
	if d == xunicode.UTF8 || Name(d) == "utf-8" {
		return utf8.Valid(trimPartial(s)) && !isISO2022JP(s)
	}
	if d == japanese.ISO2022JP || d == UTF7 {
		return isASCII(s)
	}
	_, best := Detect(b)
	if best == "utf-8" {
		// Valid UTF-8 under a legacy label: a mislabelled modern file,
		// unless it is pure ASCII (where the label does no harm).
		return isASCII(s)
	}
	dn := Name(d)
	if dn == best {
		return true
	}
	ds := scoreAs(decodeWith(s, d), candidateOf(d))
	be := Lookup(best)
	bs := scoreAs(decodeWith(s, be), candidateOf(be))
	// The label wins ties and near ties: ISO-8859-1 and Windows-1252, or
	// Windows-1251 and its look-alikes, read much the same.
	return ds >= bs-absf(bs)*0.1-1
}

func absf(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// byBOM decodes text that starts with a byte-order mark.
func byBOM(b []byte) (string, string, bool) {
	switch {
	case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
		return strings.ToValidUTF8(string(b[3:]), "\uFFFD"), "utf-8", true
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}):
		return decodeWith(b[2:], xunicode.UTF16(xunicode.LittleEndian, xunicode.IgnoreBOM)), "utf-16le", true
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}):
		return decodeWith(b[2:], xunicode.UTF16(xunicode.BigEndian, xunicode.IgnoreBOM)), "utf-16be", true
	}
	return "", "", false
}

// decodeWith decodes b, invalid sequences as U+FFFD.
func decodeWith(b []byte, e encoding.Encoding) string {
	if e == nil || e == xunicode.UTF8 {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	out, err := e.NewDecoder().Bytes(b)
	if err != nil {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

// DecodeAs decodes b in the encoding of label (UTF-8 when it names none).
func DecodeAs(b []byte, label string) string { return decodeWith(b, Lookup(label)) }

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// trimPartial drops an incomplete rune at the end of b (a sample cut
// mid-rune).
func trimPartial(b []byte) []byte {
	for k := 1; k <= 3 && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return b[:len(b)-k]
			}
			break
		}
	}
	return b
}

// Detect names the most likely encoding of b: "utf-8" for valid UTF-8 (and
// ASCII), "utf-16le"/"utf-16be" for UTF-16 (with or without a byte-order
// mark), else the best-scoring legacy candidate.
func Detect(b []byte) (encoding.Encoding, string) {
	if _, n, ok := byBOM(b); ok {
		switch n {
		case "utf-16le":
			return xunicode.UTF16(xunicode.LittleEndian, xunicode.UseBOM), n
		case "utf-16be":
			return xunicode.UTF16(xunicode.BigEndian, xunicode.UseBOM), n
		}
		return xunicode.UTF8, n
	}
	s := b[:min(len(b), sampleBytes)]
	if e, n, ok := utf16NoBOM(s); ok {
		return e, n
	}
	if isISO2022JP(s) {
		return japanese.ISO2022JP, "iso-2022-jp"
	}
	if utf8.Valid(trimPartial(s)) {
		return xunicode.UTF8, "utf-8"
	}
	best, bestScore := candidates[0], -1e18
	for _, c := range candidates {
		sc := scoreAs(decodeWith(s, c.enc), &c)
		if sc > bestScore {
			best, bestScore = c, sc
		}
	}
	return best.enc, best.name
}

// isISO2022JP: 7-bit text with the escape sequences that switch ISO-2022-JP
// (Japanese mail's charset) to JIS X 0208 and back.
func isISO2022JP(s []byte) bool {
	return (bytes.Contains(s, []byte("\x1b$B")) || bytes.Contains(s, []byte("\x1b$@"))) && isASCII(s)
}

// utf16NoBOM recognises UTF-16 without a byte-order mark: text is never
// full of NUL and other C0 control bytes, which UTF-16 has in every other
// position (the high byte of ASCII, 0x04 of Cyrillic, 0x06 of Arabic); the
// byte order that decodes to printable text wins.
func utf16NoBOM(s []byte) (encoding.Encoding, string, bool) {
	n := len(s) &^ 1
	if n < 8 {
		return nil, "", false
	}
	controls := 0
	for _, c := range s[:n] {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' {
			controls++
		}
	}
	if controls*10 < n {
		return nil, "", false
	}
	le := xunicode.UTF16(xunicode.LittleEndian, xunicode.IgnoreBOM)
	be := xunicode.UTF16(xunicode.BigEndian, xunicode.IgnoreBOM)
	pl, pb := printableShare(decodeWith(s[:n], le)), printableShare(decodeWith(s[:n], be))
	switch {
	case pl >= 0.95 && pl >= pb:
		return le, "utf-16le", true
	case pb >= 0.95:
		return be, "utf-16be", true
	}
	return nil, "", false
}

// printableShare is the share of runes in t that are letters, marks,
// digits, punctuation, symbols or ordinary white space.
func printableShare(t string) float64 {
	n, ok := 0, 0
	for _, r := range t {
		n++
		if r == '\n' || r == '\r' || r == '\t' || r != utf8.RuneError && unicode.IsPrint(r) {
			ok++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(ok) / float64(n)
}

// script classes of the letters the scorer tells apart.
const (
	scriptNone = iota
	scriptLatin
	scriptCyrillic
	scriptGreek
	scriptArabic
	scriptHebrew
	scriptThai
	scriptCJK
	scriptCount
)

func scriptOf(r rune) int {
	switch {
	case r < 0x80:
		if unicode.IsLetter(r) {
			return scriptLatin
		}
		return scriptNone
	case unicode.Is(unicode.Latin, r):
		return scriptLatin
	case unicode.Is(unicode.Cyrillic, r):
		return scriptCyrillic
	case unicode.Is(unicode.Greek, r):
		return scriptGreek
	case unicode.Is(unicode.Arabic, r):
		return scriptArabic
	case unicode.Is(unicode.Hebrew, r):
		return scriptHebrew
	case unicode.Is(unicode.Thai, r):
		return scriptThai
	case unicode.Is(unicode.Han, r), unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r), unicode.Is(unicode.Hangul, r):
		return scriptCJK
	}
	return scriptNone
}

// commonLatin are the accented letters frequent in the languages written in
// Windows-1250, 1252, 1254 and 1257; a rare one earns less.
const commonLatin = "éèàçüöäßñáíóúêâôãõëïîûåæœčšžřěůýťďňłąęśćńźżőűăîșțşğıāēīūļķņģ"

// Characters the most frequent in running text of each language (the tops
// of published frequency lists): a right guess reads many of them, a wrong
// one in the same family few.
const (
	topChinese  = "的一是不了在人有我他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母调局根曾准团段终乐切级克精哪官示冷域"
	topJapanese = "のにはをたがでてとしれさいるなかもっうくまらりこすよおあつけだめそせわみじきんゃどばえ日人年一大十二本中長出三時行見月分後前生五間上東四今金九入学高円子外八六下来気小七山話女北午百書先名川千水半男西電校語土木聞食車何南万毎白天母火右読友左休父雨"
	topKorean   = "이다의는에하고을가로서한지기를시사도일대어자리한수정보사인는게해나전부국내위주상제그만적면여실요구원화장성아경회관세동방거연소음교문없들분"
)

// scoreAs rates decoded text: higher is more like real text. c is the
// candidate that decoded it, nil for Unicode.
func scoreAs(t string, c *candidate) float64 {
	var sc float64
	var counts [scriptCount]int
	kana := 0
	prev := rune(' ')
	// A text repeats its characters: each CJK character is weighed once
	// (weighing encodes it in up to three character sets).
	weights := map[rune]float64{}
	word := make([]rune, 0, 32)
	endWord := func() {
		if len(word) > 0 {
			sc += scoreWord(word)
			word = word[:0]
		}
	}
	upper, lower := 0, 0
	for _, r := range t {
		if unicode.IsLetter(r) || unicode.IsMark(r) {
			s := scriptOf(r)
			counts[s]++
			if r >= 0x80 {
				if unicode.IsUpper(r) {
					upper++
				} else if unicode.IsLower(r) {
					lower++
				}
			}
			if s == scriptCJK {
				endWord()
				w, ok := weights[r]
				if !ok {
					w = cjkWeight(r, c)
					weights[r] = w
				}
				sc += w
				if prev < 0x80 && unicode.IsLetter(prev) {
					sc -= 4 // glued to a Latin word: a misread accented letter
				}
				prev = r
				if unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) {
					kana++
				}
				continue
			}
			if r < 0x80 && scriptOf(prev) == scriptCJK {
				sc -= 4
			}
			word = append(word, r)
			prev = r
			continue
		}
		prev = r
		endWord()
		if r < 0x80 {
			if r < 0x20 && r != '\n' && r != '\r' && r != '\t' {
				sc -= 6
			}
			continue
		}
		switch {
		case r == utf8.RuneError:
			sc -= 8
		case r < 0xA0 || unicode.IsControl(r) || unicode.Is(unicode.Co, r):
			sc -= 6
		case strings.ContainsRune("«»–—’‘“”„…€°№\u00a0•", r):
			sc += 0.5
		case unicode.In(r, unicode.Zs) || r >= 0x3000 && r <= 0x303f || r >= 0xff01 && r <= 0xff5e:
			sc += 0.5 // CJK punctuation, full-width forms
		case r >= 0xff61 && r <= 0xff9f:
			sc -= 1 // half-width katakana: what misread double bytes give
		default:
			// Other symbols (box drawing, superscripts, currency) are
			// rare in real text and what misdecoding gives.
			sc -= 1.5
		}
	}
	endWord()
	if c != nil && c.cjk && c.name != "shift_jis" && c.name != "euc-jp" {
		// GB2312 and KS X 1001 have the kana at the places EUC-JP has them:
		// many kana mean Japanese, not Chinese or Korean.
		sc -= float64(kana) * 3
	}
	// Text in capitals throughout is rare; a caseless script (Hebrew,
	// Arabic) read in a Cyrillic or Greek code page gives it.
	if upper >= 16 && upper > 4*lower {
		sc -= 1.5 * float64(upper)
	}
	// Letters of one script are expected; a second non-Latin script in
	// the same text usually means a wrong code page.
	mainScript, second := 0, 0
	for s := scriptLatin + 1; s < scriptCount; s++ {
		switch {
		case counts[s] > mainScript:
			mainScript, second = counts[s], mainScript
		case counts[s] > second:
			second = counts[s]
		}
	}
	sc -= float64(second) * 2
	return sc
}

// scoreWord rates one word of an alphabetic script: letters of one script
// earn, a Latin word made mostly of accented letters (an Arabic, Greek or
// Hebrew page read in a Latin code page) costs, as do scripts mixed in a
// word and a capital after a lower-case letter (KOI8 and Windows-1251 read
// as each other swap the cases).
func scoreWord(w []rune) float64 {
	var sc float64
	script, mixed, nonASCII, upperInside := scriptNone, false, 0, 0
	prevLower := false
	for i, r := range w {
		s := scriptOf(r)
		if unicode.IsMark(r) {
			s = script
		}
		if script == scriptNone {
			script = s
		} else if s != script && s != scriptNone {
			mixed = true
		}
		if r >= 0x80 {
			nonASCII++
		}
		if i > 0 && unicode.IsUpper(r) && prevLower {
			upperInside++
		}
		prevLower = unicode.IsLower(r)
	}
	if nonASCII == 0 {
		return 0
	}
	switch {
	case mixed:
		sc -= 3 * float64(nonASCII)
	case script == scriptLatin:
		if len(w) >= 3 && nonASCII*2 > len(w) {
			sc -= 2 * float64(nonASCII)
			break
		}
		for _, r := range w {
			if r >= 0x80 {
				if strings.ContainsRune(commonLatin, unicode.ToLower(r)) {
					sc += 1.5
				} else {
					sc += 0.2
				}
			}
		}
	case script == scriptCyrillic:
		for _, r := range w {
			if strings.ContainsRune(topCyrillic, unicode.ToLower(r)) {
				sc += 1.5
			} else {
				sc += 0.3
			}
		}
	case script == scriptGreek || script == scriptHebrew:
		// Final forms (Greek ς, Hebrew ך ם ן ף ץ) end words: one inside a
		// word is the other script read in the wrong code page.
		for i, r := range w {
			if i < len(w)-1 && strings.ContainsRune("ςךםןףץ", r) {
				sc -= 3
			} else {
				sc += 1.5
			}
		}
	case script == scriptThai:
		sc += 0.8*float64(nonASCII) - 4*float64(thaiMisplaced(w))
	default:
		sc += 1.5 * float64(nonASCII)
	}
	sc -= 3 * float64(upperInside)
	return sc
}

// topCyrillic are the frequent letters of Russian, Ukrainian and
// Bulgarian text; Hebrew or Greek read in a Cyrillic code page gives the
// rare ones (ъ щ ц) often.
const topCyrillic = "оеаинтсрвлкмдпуяызбгьчйхжюшіїєё"

// thaiMisplaced counts Thai signs where Thai spelling has none: a vowel
// sign or tone mark not after a consonant (a tone mark may follow an upper
// vowel), a leading vowel not before one.
func thaiMisplaced(w []rune) int {
	consonant := func(r rune) bool { return r >= 0x0E01 && r <= 0x0E2E }
	tone := func(r rune) bool { return r >= 0x0E48 && r <= 0x0E4C }
	bad := 0
	for i, r := range w {
		var prev rune
		if i > 0 {
			prev = w[i-1]
		}
		switch {
		case unicode.IsMark(r) && tone(r):
			if !consonant(prev) && !(unicode.IsMark(prev) && !tone(prev)) {
				bad++
			}
		case unicode.IsMark(r):
			if !consonant(prev) {
				bad++
			}
		case r >= 0x0E40 && r <= 0x0E44:
			if i+1 >= len(w) || !consonant(w[i+1]) {
				bad++
			}
		}
	}
	return bad
}

// cjkWeight rates a CJK character by how common it is, as the national
// standards order them: kana and the first levels earn most.
func cjkWeight(r rune, c *candidate) float64 {
	fam := ""
	if c != nil {
		fam = c.name
	}
	if fam == "gbk" {
		fam = "gb18030"
	}
	switch {
	case unicode.Is(unicode.Hiragana, r):
		return 2.5
	case unicode.Is(unicode.Katakana, r):
		return 1.5
	case r >= 0xAC00 && r <= 0xD7A3:
		if strings.ContainsRune(topKorean, r) {
			return 4
		}
		if inKSX1001(r) {
			return 2
		}
		return -1 // UHC extension syllables: rare
	}
	japaneseFam := fam == "shift_jis" || fam == "euc-jp"
	switch {
	case strings.ContainsRune(topChinese, r) && (fam == "" || fam == "gb18030" || fam == "big5"):
		return 4
	case strings.ContainsRune(topJapanese, r) && (fam == "" || japaneseFam):
		return 4
	case fam == "euc-kr":
		return -0.5 // hanja: rare in Korean text
	}
	w := 0.0
	if b := encodeRune(simplifiedchinese.GBK, r); (fam == "" || fam == "gb18030") && len(b) == 2 && b[0] >= 0xB0 && b[0] <= 0xD7 && b[1] >= 0xA1 {
		w = max(w, 2) // GB2312 level 1: the 3,755 common hanzi
	}
	if b := encodeRune(traditionalchinese.Big5, r); (fam == "" || fam == "big5") && len(b) == 2 && b[0] >= 0xA4 && b[0] <= 0xC6 {
		w = max(w, 2) // Big5's frequently used block
	}
	if b := encodeRune(japanese.ShiftJIS, r); (fam == "" || japaneseFam) && len(b) == 2 && b[0] >= 0x88 && b[0] <= 0x98 {
		w = max(w, 2) // JIS X 0208 level 1
	}
	if w == 0 {
		return -0.5
	}
	return w
}

func inKSX1001(r rune) bool {
	b := encodeRune(korean.EUCKR, r)
	return len(b) == 2 && b[0] >= 0xB0 && b[0] <= 0xC8 && b[1] >= 0xA1
}

// encodeRune encodes one rune, nil when e cannot.
func encodeRune(e encoding.Encoding, r rune) []byte {
	var buf [8]byte
	n := utf8.EncodeRune(buf[:], r)
	out, err := e.NewEncoder().Bytes(buf[:n])
	if err != nil {
		return nil
	}
	return out
}

// oemCandidates are the DOS ("OEM") code pages that Windows archivers write
// file names in when they do not write UTF-8: the code page of the system's
// language. Code page 437 comes first and wins ties, as the ZIP
// specification names it the default.
var oemCandidates = []candidate{
	{"ibm437", charmap.CodePage437, false},
	{"ibm850", charmap.CodePage850, false},
	{"ibm866", charmap.CodePage866, false},
	{"gbk", simplifiedchinese.GBK, true},
	{"shift_jis", japanese.ShiftJIS, true},
	{"euc-kr", korean.EUCKR, true},
	{"big5", traditionalchinese.Big5, true},
}

// DecodeName decodes a file name stored without an encoding (a ZIP entry
// name without the UTF-8 flag): UTF-8 when it is valid UTF-8, else the
// OEM code page that reads it best.
func DecodeName(raw []byte) (string, string) {
	if utf8.Valid(raw) {
		return string(raw), "utf-8"
	}
	best, bestText, bestScore := "", "", -1e18
	for i := range oemCandidates {
		c := &oemCandidates[i]
		t := decodeWith(raw, c.enc)
		if sc := scoreAs(t, c); sc > bestScore {
			best, bestText, bestScore = c.name, t, sc
		}
	}
	return bestText, best
}

package pdftext

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestThaiGlyphNames: Thai TrueType fonts of the NECTEC/TLWG family as
// pdfTeX embeds them (Norasi in the Thai lshort, no ToUnicode) name their
// glyphs by their Unicode names in camel case (ThaiCharacterKoKai is
// THAI CHARACTER KO KAI, an underscore standing for the name's hyphen),
// with suffixes for the positional variants (Left, Low, Descless), which
// mean the letter itself; the codes follow TIS-620, which gives the
// three letters whose names the font misspells (ThaiCharacterPhoPla for
// PO PLA, ThaiCharacterPoPhung for PHO PHUNG). The pages are read whole,
// none flagged partial, and spelt right (poppler reads ป, ผ and ั as
// », ¼ and Ñ).
func TestThaiGlyphNames(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"ThaiCharacterKoKai", "ก"},
		{"ThaiCharacterMaiHan_akat", "ั"},
		{"ThaiCharacterMaiHan_akatLeft", "ั"},
		{"ThaiCharacterSaraILeft", "ิ"},
		{"ThaiCharacterMaiEkLowLeft", "่"},
		{"ThaiCharacterThoThanDescless", "ฐ"},
		{"ThaiCharacterSaraAiMaimalai", "ไ"},
		{"ThaiDigitFive", "๕"},
		{"ThaiCharacterFongman", "๏"},
	} {
		if got := glyphText(c.name); got != c.want {
			t.Errorf("glyphText(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	d, err := Open(bytes.NewReader(testcorpus.Read(t, "pdf", "classes", "thai-lshort-thai-p5-6.pdf")))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]string{
		1: {"เป็นระบบจัดเรียงพิมพ์ที่เหมาะสมที่สุด", "สำหรับเอกสารทางวิทยาศาสตร์", "หนังสือทั้งเล่ม", "ประมวลผล"},
		2: {"ผู้เขียนทราบด้วย", "อะไรที่อธิบาย ได้แจ่มชัดกว่า", "รุ่นล่าสุดของเอกสารฉบับภาษาอังกฤษหาได้ที่"},
	}
	for n := 1; n <= d.PageCount(); n++ {
		pc, err := d.Page(n)
		if err != nil {
			t.Fatal(err)
		}
		if pc.Status != "" || pc.Unmapped > 0 {
			t.Errorf("page %d: status %q, %d of %d glyphs without text", n, pc.Status, pc.Unmapped, pc.Glyphs)
		}
		for _, w := range want[n] {
			if !strings.Contains(pc.Text, w) {
				t.Errorf("page %d lacks %q:\n%s", n, w, pc.Text)
			}
		}
	}
}

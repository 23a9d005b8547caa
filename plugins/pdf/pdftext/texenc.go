package pdftext

import (
	"strconv"
	"strings"
)

// Fonts whose glyph names only number the glyphs. pdfTeX writes a bitmap
// (PK) font as a Type 3 font whose Differences name code n /an (/a97 for
// code 97); xdvipdfmx writes /xHH, Ghostscript and old drivers /gNN, /cNN,
// /GHH or bare numbers. Such a name says nothing about the character but
// its code, and the code is one of the font's TeX encoding: OT1 for
// Computer Modern and most fonts of TeX documents written before the EC
// fonts, T1 (Cork) for the EC fonts. numberedGlyph reads the code from the
// name and texText turns it into text by the encoding the font's glyphs
// point to (see texEncodingOf).

// numberedGlyph reads the code a numbering glyph name stands for: aN, gN,
// cN, CN (decimal), xHH, GHH (two hex digits) or a bare decimal number, all
// below 256. ok is false for any other name, including real glyph names
// that happen to end in digits (a1 is also a Zapf Dingbats name: callers
// apply this only to fonts whose names number their glyphs, see
// numberedNames).
func numberedGlyph(name string) (code int, ok bool) {
	if name == "" || len(name) > 4 {
		return 0, false
	}
	digits, base := name, 10
	switch name[0] {
	case 'a', 'g', 'c', 'C':
		digits = name[1:]
	case 'x', 'G':
		digits, base = name[1:], 16
		if len(digits) != 2 {
			return 0, false
		}
	}
	if digits == "" || strings.ContainsAny(digits[:1], "+-") {
		return 0, false
	}
	v, err := strconv.ParseUint(digits, base, 8)
	if err != nil {
		return 0, false
	}
	return int(v), true
}

// numberedNames reports whether a font's encoding names its glyphs by
// number: most of the names it gives are numbering names (a Type 3 font by
// pdfTeX names all 256).
func numberedNames(names *[256]string) bool {
	named, numbered := 0, 0
	for _, n := range names {
		if n == "" || n == ".notdef" {
			continue
		}
		named++
		if _, ok := numberedGlyph(n); ok {
			numbered++
		}
	}
	return numbered > 0 && 10*numbered >= 8*named
}

// texEncoding is one of the TeX font encodings a numbered font's codes may
// follow.
type texEncoding uint8

const (
	texOT1   texEncoding = iota // Computer Modern text fonts (cmr, cmbx, cmti, cmmi's letters)
	texOT1tt                    // Computer Modern typewriter (cmtt): ASCII in 32..126
	texT1                       // Cork (EC fonts, cm-super)
)

// texEncodingOf guesses a numbered font's TeX encoding from the codes that
// have glyphs (used[c]) and their widths: codes above 127 exist only in T1,
// ligatures sit at 27..31 in T1 and at 11..15 in OT1, and a font whose
// glyphs all have one width is a typewriter face.
func texEncodingOf(used *[256]bool, width *[256]float64) texEncoding {
	high, t1lig, ot1lig := false, false, false
	w, mono := 0.0, true
	for c, u := range used {
		if !u {
			continue
		}
		switch {
		case c >= 128:
			high = true
		case c >= 27 && c <= 31:
			t1lig = true
		case c >= 11 && c <= 15:
			ot1lig = true
		}
		if c >= 33 && c < 127 && width[c] > 0 {
			if w == 0 {
				w = width[c]
			} else if abs(width[c]-w) > 0.01*w {
				mono = false
			}
		}
	}
	switch {
	case high || (t1lig && !ot1lig):
		return texT1
	case mono && w > 0:
		return texOT1tt
	}
	return texOT1
}

// ot1Low is OT1 below 32 (cmr10's layout); ot1Ascii the printable ASCII
// positions where OT1 differs from ASCII.
var ot1Low = [32]string{
	"Γ", "Δ", "Θ", "Λ", "Ξ", "Π", "Σ", "Υ", "Φ", "Ψ", "Ω", "ff", "fi", "fl", "ffi", "ffl",
	"ı", "ȷ", "`", "´", "ˇ", "˘", "¯", "˚", "¸", "ß", "æ", "œ", "ø", "Æ", "Œ", "Ø",
}

func ot1Ascii(c int) (string, bool) {
	switch c {
	case 0x22:
		return "”", true
	case 0x27:
		return "’", true
	case 0x3C:
		return "¡", true
	case 0x3E:
		return "¿", true
	case 0x5C:
		return "“", true
	case 0x5F:
		return "˙", true
	case 0x60:
		return "‘", true
	case 0x7B:
		return "–", true
	case 0x7C:
		return "—", true
	case 0x7D:
		return "˝", true
	case 0x7E:
		return "˜", true
	case 0x7F:
		return "¨", true
	}
	return "", false
}

// ot1ttLow is cmtt's layout below 32, which differs from cmr's from 11 on.
var ot1ttLow = [32]string{
	"Γ", "Δ", "Θ", "Λ", "Ξ", "Π", "Σ", "Υ", "Φ", "Ψ", "Ω", "↑", "↓", "'", "¡", "¿",
	"ı", "ȷ", "`", "´", "ˇ", "˘", "¯", "˚", "¸", "ß", "æ", "œ", "ø", "Æ", "Œ", "Ø",
}

// t1Low is T1 below 32; t1High from 128 (Latin-1 from 0xC0 except three
// codes).
var t1Low = [32]string{
	"`", "´", "ˆ", "˜", "¨", "˝", "˚", "ˇ", "˘", "¯", "˙", "¸", "˛", "‚", "‹", "›",
	"“", "”", "„", "«", "»", "–", "—", "", "", "ı", "ȷ", "ff", "fi", "fl", "ffi", "ffl",
}

var t1High = [128]string{
	"Ă", "Ą", "Ć", "Č", "Ď", "Ě", "Ę", "Ğ", "Ĺ", "Ľ", "Ł", "Ń", "Ň", "Ŋ", "Ő", "Ŕ",
	"Ř", "Ś", "Š", "Ş", "Ť", "Ţ", "Ű", "Ů", "Ÿ", "Ź", "Ž", "Ż", "Ĳ", "İ", "đ", "§",
	"ă", "ą", "ć", "č", "ď", "ě", "ę", "ğ", "ĺ", "ľ", "ł", "ń", "ň", "ŋ", "ő", "ŕ",
	"ř", "ś", "š", "ş", "ť", "ţ", "ű", "ů", "ÿ", "ź", "ž", "ż", "ĳ", "¡", "¿", "£",
	"À", "Á", "Â", "Ã", "Ä", "Å", "Æ", "Ç", "È", "É", "Ê", "Ë", "Ì", "Í", "Î", "Ï",
	"Ð", "Ñ", "Ò", "Ó", "Ô", "Õ", "Ö", "Œ", "Ø", "Ù", "Ú", "Û", "Ü", "Ý", "Þ", "SS",
	"à", "á", "â", "ã", "ä", "å", "æ", "ç", "è", "é", "ê", "ë", "ì", "í", "î", "ï",
	"ð", "ñ", "ò", "ó", "ô", "õ", "ö", "œ", "ø", "ù", "ú", "û", "ü", "ý", "þ", "ß",
}

// texText is the text of code c in a TeX encoding; "" for codes without
// one (T1's compound-word mark). Code 32, a visible space in T1 and cmtt,
// is a space: that is what it stands for in the text.
func texText(enc texEncoding, c int) string {
	switch {
	case c < 0 || c > 255:
		return ""
	case c < 32:
		switch enc {
		case texT1:
			return t1Low[c]
		case texOT1tt:
			return ot1ttLow[c]
		}
		return ot1Low[c]
	case c >= 128:
		if enc == texT1 {
			return t1High[c-128]
		}
		return ""
	}
	switch enc {
	case texT1:
		switch c {
		case 0x27:
			return "’"
		case 0x60:
			return "‘"
		case 0x7F:
			return "-"
		}
	case texOT1:
		if s, ok := ot1Ascii(c); ok {
			return s
		}
	case texOT1tt:
		if c == 0x7F {
			return "¨"
		}
	}
	return string(rune(c))
}

package archive

import "unicode/utf8"

// cp437 is the upper half of code page 437, the encoding zip names have
// when the UTF-8 flag is unset and the bytes are not UTF-8 (old Windows and
// DOS tools): decoding it keeps every path valid UTF-8 for JSON and the UI.
var cp437 = [128]rune{
	'Ç', 'ü', 'é', 'â', 'ä', 'à', 'å', 'ç', 'ê', 'ë', 'è', 'ï', 'î', 'ì', 'Ä', 'Å',
	'É', 'æ', 'Æ', 'ô', 'ö', 'ò', 'û', 'ù', 'ÿ', 'Ö', 'Ü', '¢', '£', '¥', '₧', 'ƒ',
	'á', 'í', 'ó', 'ú', 'ñ', 'Ñ', 'ª', 'º', '¿', '⌐', '¬', '½', '¼', '¡', '«', '»',
	'░', '▒', '▓', '│', '┤', '╡', '╢', '╖', '╕', '╣', '║', '╗', '╝', '╜', '╛', '┐',
	'└', '┴', '┬', '├', '─', '┼', '╞', '╟', '╚', '╔', '╩', '╦', '╠', '═', '╬', '╧',
	'╨', '╤', '╥', '╙', '╘', '╒', '╓', '╫', '╪', '┘', '┌', '█', '▄', '▌', '▐', '▀',
	'α', 'ß', 'Γ', 'π', 'Σ', 'σ', 'µ', 'τ', 'Φ', 'Θ', 'Ω', 'δ', '∞', 'φ', 'ε', '∩',
	'≡', '±', '≥', '≤', '⌠', '⌡', '÷', '≈', '°', '∙', '·', '√', 'ⁿ', '²', '■', '\u00a0',
}

// zipName decodes a raw zip name: UTF-8 when it is (many tools write UTF-8
// without setting the flag), else code page 437.
func zipName(raw []byte) string {
	if utf8.Valid(raw) {
		return string(raw)
	}
	rs := make([]rune, len(raw))
	for i, b := range raw {
		if b < 0x80 {
			rs[i] = rune(b)
		} else {
			rs[i] = cp437[b-0x80]
		}
	}
	return string(rs)
}

package textenc

import (
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// UTF7 is UTF-7 (RFC 2152), which mailers of the 1990s and some webmail
// gateways still label mails with: ASCII as itself, other characters as
// "+" then modified base64 of their UTF-16 code units, up to a "-" or any
// character outside base64 ("+-" is a "+"). golang.org/x/text has no UTF-7.
// Only decoding is needed; its encoder is x/text's replacement.
var UTF7 encoding.Encoding = utf7{}

type utf7 struct{}

func (utf7) NewDecoder() *encoding.Decoder { return &encoding.Decoder{Transformer: &utf7Decoder{}} }
func (utf7) NewEncoder() *encoding.Encoder { return encoding.Replacement.NewEncoder() }
func (utf7) String() string                { return "utf-7" }

// utf7Decoder decodes UTF-7. A base64 run is decoded whole: one cut by the
// end of src waits for more (transform.ErrShortSrc) unless at EOF.
type utf7Decoder struct{ transform.NopResetter }

// b64 is the value of a base64 character, -1 for any other byte.
func b64(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return -1
}

func (d *utf7Decoder) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for nSrc < len(src) {
		c := src[nSrc]
		if c != '+' {
			r := rune(c)
			if c >= 0x80 { // not 7-bit: no UTF-7
				r = utf8.RuneError
			}
			if nDst+utf8.RuneLen(r) > len(dst) {
				return nDst, nSrc, transform.ErrShortDst
			}
			nDst += utf8.EncodeRune(dst[nDst:], r)
			nSrc++
			continue
		}
		j := nSrc + 1
		for j < len(src) && b64(src[j]) >= 0 {
			j++
		}
		if j == len(src) && !atEOF {
			return nDst, nSrc, transform.ErrShortSrc
		}
		end := j // the run's end, past its "-" when it has one
		if j < len(src) && src[j] == '-' {
			end++
		}
		out := []byte{'+'} // "+-", or a lone "+"
		if j > nSrc+1 {
			var units []uint16
			var bits uint32
			n := 0
			for _, ch := range src[nSrc+1 : j] {
				bits = bits<<6 | uint32(b64(ch))
				n += 6
				if n >= 16 {
					n -= 16
					units = append(units, uint16(bits>>n))
					bits &= 1<<n - 1
				}
			}
			out = []byte(string(utf16.Decode(units)))
		}
		if nDst+len(out) > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += copy(dst[nDst:], out)
		nSrc = end
	}
	return nDst, nSrc, nil
}

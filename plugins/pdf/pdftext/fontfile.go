package pdftext

import (
	"bytes"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// The built-in encoding of an embedded font program. A simple font with no
// /Encoding (pdffonts says "Builtin") means its codes through the encoding
// vector inside the font: TeX's Computer Modern fonts are the common case,
// where code 12 is "fi" and code 39 "quoteright". Type 1 programs (FontFile)
// keep that vector in their cleartext part, before eexec, as
// "dup <code> /<name> put"; that is all we read of them. CFF programs
// (FontFile3 /Type1C) are read in cff.go.

// builtinEncoding fills names from the font program named by a font
// descriptor and reports whether it found an encoding.
func (d *Document) builtinEncoding(desc types.Dict, names *[256]string) bool {
	if desc == nil {
		return false
	}
	if sd, ok := d.deref(desc["FontFile"]).(types.StreamDict); ok {
		data, err := d.streamData(sd)
		if err != nil {
			return false
		}
		if n, ok := d.number(sd.Dict["Length1"]); ok && int(n) > 0 && int(n) < len(data) {
			data = data[:int(n)]
		}
		return type1Encoding(data, names)
	}
	if sd, ok := d.deref(desc["FontFile3"]).(types.StreamDict); ok && d.name(sd.Dict["Subtype"]) == "Type1C" {
		data, err := d.streamData(sd)
		if err != nil {
			return false
		}
		return cffEncoding(data, names)
	}
	return false
}

// type1Encoding reads the /Encoding of a Type 1 font program's cleartext.
func type1Encoding(data []byte, names *[256]string) bool {
	if i := bytes.Index(data, []byte("eexec")); i >= 0 {
		data = data[:i]
	}
	i := bytes.Index(data, []byte("/Encoding"))
	if i < 0 {
		return false
	}
	l := &lexer{data: data, pos: i + len("/Encoding")}
	t := l.next()
	if t.kind == tokKeyword && string(t.b) == "StandardEncoding" {
		*names = standardEncoding
		return true
	}
	found := false
	// The vector: "256 array 0 1 255 {1 index exch /.notdef put} for" and
	// then the dup lines, ended by "readonly def".
	var prev [3]token
	for n := 0; n < 1<<14; n++ {
		t = l.next()
		if t.kind == tokEOF {
			break
		}
		if t.kind == tokKeyword {
			switch string(t.b) {
			case "put":
				if prev[0].kind == tokKeyword && string(prev[0].b) == "dup" &&
					prev[1].kind == tokNumber && prev[2].kind == tokName {
					if c := int(prev[1].num); c >= 0 && c < 256 {
						names[c] = string(prev[2].b)
						found = true
					}
				}
			case "def":
				if found {
					return true
				}
			}
		}
		prev[0], prev[1], prev[2] = prev[1], prev[2], t
	}
	return found
}

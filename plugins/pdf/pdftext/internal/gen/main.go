// Command gen writes the two generated tables of package pdftext from the
// source data committed beside it (run by `go generate` in pdftext):
//
//	aglist.go      from glyphlist.txt, the Adobe Glyph List 2.0 (BSD-3, its
//	               licence in the file's header). The original list is not
//	               available offline here; glyphlist.txt was written back
//	               from aglist.go as it was generated before (so the entries
//	               are in byte order, not the list's own order, and the list's
//	               header comment lines are kept as they were).
//	stdmetrics.go  from afm/*.afm, Adobe's Core 14 AFM files (their terms in
//	               afm/MustRead.html: copied and distributed freely with that
//	               file), as pdfcpu v0.15.0 ships them in internal/corefont.
//	uninames.go    the Unicode character names of the scripts whose fonts
//	               name glyphs by them (Thai, Lao), from golang.org/x/text's
//	               unicode/runenames (the module's version, in go.mod).
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/runenames"
)

func main() {
	dir := flag.String("dir", "internal/gen", "the folder of the source data")
	out := flag.String("out", ".", "the folder of pdftext, where the files are written")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	agl, err := aglist(filepath.Join(dir, "glyphlist.txt"))
	if err != nil {
		return err
	}
	metrics, err := stdmetrics(filepath.Join(dir, "afm"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "aglist.go"), agl, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "uninames.go"), uninames(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "stdmetrics.go"), metrics, 0o644)
}

// aglist renders aglist.go from the glyph list: its "#" lines become the
// header comment, each "name;XXXX[ XXXX]" an entry, sorted by name.
func aglist(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	type entry struct{ name, text string }
	var header []string
	var entries []entry
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			header = append(header, "//"+line[1:])
			continue
		}
		name, codes, ok := strings.Cut(line, ";")
		if !ok || name == "" {
			return nil, fmt.Errorf("%s:%d: want name;XXXX[ XXXX]", path, i+1)
		}
		var text strings.Builder
		for _, c := range strings.Fields(codes) {
			r, err := strconv.ParseUint(c, 16, 32)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %q is not a code point", path, i+1, c)
			}
			text.WriteRune(rune(r))
		}
		entries = append(entries, entry{name, text.String()})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var b bytes.Buffer
	b.WriteString(`// Code generated from the Adobe Glyph List; DO NOT EDIT.

// Source: glyphlist.txt of adobe-type-tools/agl-aglfn at commit
// 4036a9ca80a62f64f9de4f7321a9a045ad0ecfd6, as Debian's python3-fonttools
// 4.38 ships it (fontTools/agl.py, _aglText): each line name;XXXX[ XXXX]
// is one entry below, its code points as the text.
// Its licence, as the list states it:
//
`)
	b.WriteString(strings.Join(header, "\n"))
	b.WriteString(`

package pdftext

// aglEntry is one name of the Adobe Glyph List with its text.
type aglEntry struct{ name, text string }

// aglList is the Adobe Glyph List, sorted by name (byte order), for a
// binary search: static data, nothing to build at start-up.
var aglList = [...]aglEntry{
`)
	for _, e := range entries {
		fmt.Fprintf(&b, "\t{%q, %s},\n", e.name, goText(e.text))
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// goText quotes s with printable ASCII as itself and every other code
// point (and the quote and backslash) as \uXXXX.
func goText(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r >= ' ' && r <= '~' && r != '"' && r != '\\' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// afmChar is one C line of an AFM file.
type afmChar struct {
	code  int
	width int
	name  string
}

func readAFM(path string) ([]afmChar, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []afmChar
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "C ") {
			continue
		}
		var c afmChar
		for _, field := range strings.Split(line, ";") {
			kv := strings.Fields(field)
			if len(kv) < 2 {
				continue
			}
			switch kv[0] {
			case "C":
				c.code, err = strconv.Atoi(kv[1])
			case "WX":
				c.width, err = strconv.Atoi(kv[1])
			case "N":
				c.name = kv[1]
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", path, line, err)
			}
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// stdmetrics renders stdmetrics.go: the Latin glyph names in Helvetica's
// AFM order, each Latin font's widths in that order, and Symbol's encoding.
func stdmetrics(dir string) ([]byte, error) {
	helvetica, err := readAFM(filepath.Join(dir, "Helvetica.afm"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range helvetica {
		names = append(names, strconv.Quote(c.name))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `// Code generated from the Adobe Core 14 AFM files (Adobe Systems, freely
// redistributable; the copies shipped in pdfcpu's internal/corefont). DO NOT EDIT.

package pdftext

// latinGlyphs names the %d glyphs of the standard Latin fonts, in AFM order;
// the width tables below are indexed the same way.
var latinGlyphs = [...]string{
`, len(names))
	wrap(&b, names)
	b.WriteString("}\n")
	for _, font := range []string{"Helvetica", "Helvetica-Bold", "Times-Roman", "Times-Bold", "Times-Italic", "Times-BoldItalic"} {
		chars, err := readAFM(filepath.Join(dir, font+".afm"))
		if err != nil {
			return nil, err
		}
		width := map[string]int{}
		for _, c := range chars {
			width[c.name] = c.width
		}
		var ws []string
		for _, c := range helvetica {
			w, ok := width[c.name]
			if !ok {
				return nil, fmt.Errorf("%s.afm has no glyph %s", font, c.name)
			}
			ws = append(ws, strconv.Itoa(w))
		}
		fmt.Fprintf(&b, "\n// %s widths in 1/1000 text space units (the oblique variants share them).\nvar widths%s = [...]uint16{\n",
			font, strings.ReplaceAll(font, "-", ""))
		wrap(&b, ws)
		b.WriteString("}\n")
	}
	symbol, err := readAFM(filepath.Join(dir, "Symbol.afm"))
	if err != nil {
		return nil, err
	}
	b.WriteString(`
// symbolGlyphs is the Symbol font's built-in encoding and widths: code, width, glyph name.
var symbolGlyphs = [...]struct {
	code  uint8
	width uint16
	name  string
}{
`)
	for _, c := range symbol {
		if c.code < 0 {
			continue // not in the built-in encoding
		}
		fmt.Fprintf(&b, "\t{%d, %d, %q},\n", c.code, c.width, c.name)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// wrap writes items comma-separated, a tab before each line, as many to a
// line as keep it within 99 bytes (the tab counted as one).
func wrap(b *bytes.Buffer, items []string) {
	line := ""
	for _, it := range items {
		next := it + ","
		if line != "" && 1+len(line)+1+len(next) > 99 {
			b.WriteString("\t" + line + "\n")
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += next
	}
	if line != "" {
		b.WriteString("\t" + line + "\n")
	}
}

// uninameBlocks are the blocks whose characters' names uninames lists:
// Thai and Lao, whose fonts of the NECTEC and TLWG family name their glyphs
// by them (ThaiCharacterKoKai).
var uninameBlocks = [][2]rune{{0x0E00, 0x0E7F}, {0x0E80, 0x0EFF}}

// uninames renders uninames.go: each character's name as a key (lower
// case, without spaces and hyphens), sorted, with its character.
func uninames() []byte {
	type entry struct {
		key string
		r   rune
	}
	var es []entry
	for _, b := range uninameBlocks {
		for r := b[0]; r <= b[1]; r++ {
			n := runenames.Name(r)
			if n == "" || strings.HasPrefix(n, "<") {
				continue
			}
			es = append(es, entry{strings.ToLower(strings.NewReplacer(" ", "", "-", "").Replace(n)), r})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].key < es[j].key })
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/gen from golang.org/x/text/unicode/runenames; DO NOT EDIT.\n\n")
	b.WriteString("package pdftext\n\n")
	b.WriteString("// uniNames are the Unicode names of the Thai and Lao characters, as\n")
	b.WriteString("// uniNameGlyph looks them up: lower case, without spaces and hyphens,\n")
	b.WriteString("// sorted.\n")
	b.WriteString("var uniNames = [...]struct {\n\tkey string\n\tr   rune\n}{\n")
	for _, e := range es {
		fmt.Fprintf(&b, "\t{%q, 0x%04X},\n", e.key, e.r)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

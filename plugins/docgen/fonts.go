package main

import (
	_ "embed" // the fonts below
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/image/font/sfnt"
)

// The fonts are embedded as []byte, which go:embed does not copy (a string
// or an embed.FS read would copy 4.9 MB on every call); nothing writes to
// them. Their source, version and licences: fonts/README.md.
var (
	//go:embed fonts/DejaVuSans.ttf
	dejaVuSans []byte
	//go:embed fonts/DejaVuSans-Bold.ttf
	dejaVuSansBold []byte
	//go:embed fonts/DroidSansFallback.ttf
	droidSansFallback []byte
)

// embFont is one TrueType font the PDF may embed: its tables, its cmap
// (through sfnt), its advances, and the glyphs the document has used, with
// the text each stands for (the ToUnicode CMap).
type embFont struct {
	res, name  string // resource name (F1…), PostScript name
	tables     sfntTables
	sf         *sfnt.Font
	buf        sfnt.Buffer
	unitsPerEm float64
	used       map[uint16][]rune
}

func newEmbFont(res, name string, data []byte) (*embFont, error) {
	t, err := readTables(data)
	if err != nil {
		return nil, fmt.Errorf("font %s: %w", name, err)
	}
	sf, err := sfnt.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("font %s: %w", name, err)
	}
	upem := float64(binary.BigEndian.Uint16(t["head"][18:]))
	if upem == 0 {
		return nil, fmt.Errorf("font %s: unitsPerEm 0", name)
	}
	return &embFont{res: res, name: name, tables: t, sf: sf, unitsPerEm: upem, used: map[uint16][]rune{}}, nil
}

// gid is r's glyph id, 0 when the font has none.
func (f *embFont) gid(r rune) uint16 {
	g, err := f.sf.GlyphIndex(&f.buf, r)
	if err != nil {
		return 0
	}
	return uint16(g)
}

// advance is glyph g's advance width in 1/1000 em, as the PDF's /W array
// gives it (so layout and viewer agree).
func (f *embFont) advance(g uint16) int {
	hmtx, nh := f.tables["hmtx"], f.tables.numHMetrics()
	i := min(int(g), nh-1)
	if nh == 0 || len(hmtx) < 4*i+2 {
		return 0
	}
	return int(float64(binary.BigEndian.Uint16(hmtx[4*i:]))*1000/f.unitsPerEm + 0.5)
}

// glyph is one character laid out: the font (an index into fontSet.fonts),
// its glyph id and its advance in 1/1000 em.
// It is kept small (12 bytes): a long document lays out one per character.
type glyph struct {
	r   rune // the character it stands for
	gid uint16
	w   int16
	// font indexes fontSet.fonts; level is the character's bidi embedding
	// level (bidi.go).
	font, level uint8
}

// style picks a fallback chain.
type style int

const (
	regularStyle style = iota
	boldStyle
)

// fontSet holds the PDF's fonts and, per style, the chain a character's
// font is taken from: the first font with a glyph for it.
type fontSet struct {
	fonts  []*embFont
	chains [2][]int
	cache  [2]map[rune]glyph
	// ascii caches the first 128 characters' glyphs (gid 0: not looked
	// up yet) without a map lookup, the most of most documents.
	ascii [2][128]glyph
}

// newFontSet parses the embedded fonts. DejaVu Sans comes first (Latin,
// Greek, Cyrillic, Armenian, Georgian, Hebrew, Arabic); Droid Sans Fallback
// (Chinese, Japanese, Korean) after it; bold text falls back to the regular
// faces, as there is no bold CJK face.
func newFontSet() (*fontSet, error) {
	var fs fontSet
	for i, f := range []struct {
		name string
		data []byte
	}{{"DejaVuSans", dejaVuSans}, {"DejaVuSans-Bold", dejaVuSansBold}, {"DroidSansFallback", droidSansFallback}} {
		ef, err := newEmbFont(fmt.Sprintf("F%d", i+1), f.name, f.data)
		if err != nil {
			return nil, err
		}
		fs.fonts = append(fs.fonts, ef)
	}
	fs.chains = [2][]int{{0, 2}, {1, 0, 2}}
	fs.cache = [2]map[rune]glyph{{}, {}}
	return &fs, nil
}

// ignorable characters draw nothing and are left out: zero-width spaces
// and joiners, bidi controls, variation selectors, the byte-order mark.
func ignorable(r rune) bool {
	return r >= 0x200B && r <= 0x200F || r >= 0x202A && r <= 0x202E || r >= 0x2060 && r <= 0x2064 ||
		r >= 0xFE00 && r <= 0xFE0F || r == 0xFEFF || unicode.Is(unicode.Variation_Selector, r)
}

// lookup finds r's glyph in st's chain; ok is false when no font has one.
func (fs *fontSet) lookup(st style, r rune) (glyph, bool) {
	if r >= 0 && r < 128 && fs.ascii[st][r].gid != 0 {
		return fs.ascii[st][r], true
	}
	if g, ok := fs.cache[st][r]; ok {
		return g, true
	}
	for _, i := range fs.chains[st] {
		if gid := fs.fonts[i].gid(r); gid != 0 {
			g := glyph{font: uint8(i), gid: gid, w: int16(fs.fonts[i].advance(gid)), r: r}
			fs.cache[st][r] = g
			if r >= 0 && r < 128 {
				fs.ascii[st][r] = g
			}
			return g, true
		}
	}
	return glyph{}, false
}

// covered reports whether some font has a glyph for r.
func (fs *fontSet) covered(r rune) bool {
	_, ok := fs.lookup(boldStyle, r) // the bold chain holds every font
	return ok
}

// shape turns text into glyphs at level 0 (shapeRunes).
func (fs *fontSet) shape(st style, text string) []glyph {
	return fs.shapeRunes(st, []rune(text), nil)
}

// shapeRunes turns a word into glyphs: Arabic letters take their joining
// forms (bidi.go), a character no font has becomes the '?' of the chain's
// first font (the result's note counts them), a tab a space, control and
// ignorable characters nothing. lv are the characters' bidi levels (nil:
// all 0).
func (fs *fontSet) shapeRunes(st style, rs []rune, lv []uint8) []glyph {
	draw := presentation(rs)
	out := make([]glyph, 0, len(rs))
	for i, r := range rs {
		if r == '\t' {
			r = ' '
		}
		if r < 0x20 || r == 0x7F || ignorable(r) {
			continue
		}
		g, ok := fs.lookup(st, draw[i])
		if !ok && draw[i] != r {
			g, ok = fs.lookup(st, r) // the font lacks the joining form
		}
		if !ok {
			g, _ = fs.lookup(st, '?')
		} else {
			g.r = r
		}
		if lv != nil {
			g.level = lv[i]
		}
		out = append(out, g)
	}
	return out
}

// use records that the glyphs are drawn: the PDF embeds them and maps
// each back to its character.
func (fs *fontSet) use(gs []glyph) {
	for _, g := range gs {
		f := fs.fonts[g.font]
		if _, ok := f.used[g.gid]; !ok {
			f.used[g.gid] = []rune{g.r}
		}
	}
}

// subsetTag is the six capital letters before a subset's name (PDF
// 32000-1, 9.6.4), made from its glyphs so that different subsets of one
// font get different names.
func subsetTag(used map[uint16][]rune) string {
	gids := sortedGIDs(used)
	h := fnv.New64a()
	for _, g := range gids {
		h.Write([]byte{byte(g >> 8), byte(g)})
	}
	v := h.Sum64()
	var b strings.Builder
	for range 6 {
		b.WriteByte(byte('A' + v%26))
		v /= 26
	}
	return b.String()
}

func sortedGIDs(used map[uint16][]rune) []uint16 {
	gids := make([]uint16, 0, len(used))
	for g := range used {
		gids = append(gids, g)
	}
	sort.Slice(gids, func(i, j int) bool { return gids[i] < gids[j] })
	return gids
}

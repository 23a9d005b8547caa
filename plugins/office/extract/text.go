package extract

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/plugins/textenc"
)

// readInput reads a whole text input, at most MaxPartBytes of it; cut says
// whether the input was longer.
func readInput(in input) (b []byte, cut bool, err error) {
	n := min(in.size, in.lim.MaxPartBytes)
	b = make([]byte, n)
	if err := readAtFull(in.r, b, 0); err != nil && n > 0 {
		return nil, false, fmt.Errorf("%w: reading: %w", ErrMalformed, err)
	}
	return b, in.size > n, nil
}

// decodeText turns bytes into UTF-8 (decodeTextAs without the name).
func decodeText(b []byte) string {
	t, _ := decodeTextAs(b, "")
	return t
}

// decodeTextAs turns bytes into UTF-8 and names the encoding it read:
// valid UTF-8 stays as it is (a cut at the read limit may split its last
// rune); otherwise a byte-order mark, the declared charset when the bytes
// bear it out, or detection decide (textenc: UTF-16 without a byte-order
// mark, Shift-JIS, GB18030, Big5, EUC-KR, Windows-125x, KOI8, cp866).
func decodeTextAs(b []byte, declared string) (string, string) {
	if textenc.Lookup(declared) == textenc.UTF7 {
		// UTF-7 is ASCII, valid UTF-8 too: only its label tells.
		return textenc.Decode(b, declared)
	}
	if !bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) && !bytes.HasPrefix(b, []byte{0xff, 0xfe}) && !bytes.HasPrefix(b, []byte{0xfe, 0xff}) {
		if t := trimPartialRune(b); utf8.Valid(t) && !hasControls(t) && !bytes.Contains(t, []byte("\x1b$")) {
			return string(t), "utf-8"
		}
	}
	return textenc.Decode(b, declared)
}

// hasControls: NUL and other C0 controls, which text has not and UTF-16
// without a byte-order mark has in every other byte.
func hasControls(b []byte) bool {
	n := 0
	for _, c := range b[:min(len(b), 4096)] {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' {
			n++
		}
	}
	return n > 0 && n*10 >= min(len(b), 4096)
}

// trimPartialRune drops an incomplete rune at the end of b.
func trimPartialRune(b []byte) []byte {
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

// lines splits text into lines without their terminators (\n, \r\n, \r).
func lines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// block is a run of lines emitted as one text object.
type block struct {
	first, last int // line numbers from 1
	text        string
}

// blocksOf groups lines (numbered from first) into blocks of about size
// bytes, breaking at a blank line where one keeps the block at least half
// full, so paragraphs stay whole. Blank lines at a block's edges are left
// out of it and of its line range.
func blocksOf(ls []string, first, size int) []block {
	var out []block
	emit := func(begin, end int) {
		for begin < end && isBlank(ls[begin]) {
			begin++
		}
		for end > begin && isBlank(ls[end-1]) {
			end--
		}
		if begin < end {
			out = append(out, block{first: first + begin, last: first + end - 1, text: strings.Join(ls[begin:end], "\n")})
		}
	}
	begin, n, blank := 0, 0, -1
	for i, l := range ls {
		if i > begin && n+len(l)+1 > size {
			cut := i
			if blank > begin && n-lenJoined(ls[blank:i]) >= size/2 {
				cut = blank + 1
			}
			emit(begin, cut)
			begin, n, blank = cut, lenJoined(ls[cut:i]), -1
			for j := cut; j < i; j++ {
				if isBlank(ls[j]) {
					blank = j
				}
			}
		}
		if isBlank(l) {
			blank = i
		}
		n += len(l) + 1
	}
	emit(begin, len(ls))
	return out
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

func lenJoined(ls []string) int {
	n := 0
	for _, l := range ls {
		n += len(l) + 1
	}
	return n
}

// extractPlain emits a text file as blocks of lines.
func extractPlain(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	text, enc := decodeTextAs(b, in.charset)
	if strings.IndexByte(text[:min(len(text), 8192)], 0) >= 0 {
		return fmt.Errorf("%w: binary data, not text", ErrMalformed)
	}
	if enc != "utf-8" {
		s.structure["encoding"] = enc
	}
	ls := lines(text)
	emitLineBlocks(s, ls, 1, in.lim.BlockBytes, content.Ref{}, nil)
	s.structure["lines"] = len(ls)
	if cut {
		s.structure["inputCut"] = in.lim.MaxPartBytes
	}
	return nil
}

// emitLineBlocks adds the blocks of ls (numbered from first) as text
// objects with Location "line:A-B" on top of ref.
func emitLineBlocks(s *sink, ls []string, first, size int, ref content.Ref, md map[string]any) bool {
	for _, bl := range blocksOf(ls, first, size) {
		r := ref
		r.Location = lineRange(bl.first, bl.last)
		var m map[string]any
		if md != nil {
			m = make(map[string]any, len(md))
			for k, v := range md {
				m[k] = v
			}
		}
		if !s.add(content.Object{ContentType: content.Text, Data: bl.text, Ref: r, Metadata: m}) {
			return false
		}
	}
	return true
}

func lineRange(a, b int) string {
	if a == b {
		return fmt.Sprintf("line:%d", a)
	}
	return fmt.Sprintf("line:%d-%d", a, b)
}

package extract

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// An Outlook message whose body was written as RTF (or as HTML wrapped in
// RTF) may keep it only in PR_RTF_COMPRESSED, compressed as [MS-OXRTFCP]
// says: a 16-byte header, then LZ77 runs over a 4,096-byte dictionary
// that starts with a fixed RTF prefix.

// rtfPrebuf is the dictionary's initial content ([MS-OXRTFCP] 3.1.3.1).
const rtfPrebuf = `{\rtf1\ansi\mac\deff0\deftab720{\fonttbl;}{\f0\fnil \froman \fswiss \fmodern \fscript \fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\colortbl\red0\green0\blue0` + "\r\n" + `\par \pard\plain\f0\fs20\b\i\u\tab\tx`

const (
	rtfCompressed   = 0x75465A4C // "LZFu"
	rtfUncompressed = 0x414C454D // "MELA"
)

// decompressRTF undoes PR_RTF_COMPRESSED, producing at most max bytes.
func decompressRTF(b []byte, max int) ([]byte, error) {
	if len(b) < 16 {
		return nil, errors.New("compressed RTF: shorter than its header")
	}
	raw := int(binary.LittleEndian.Uint32(b[4:]))
	typ := binary.LittleEndian.Uint32(b[8:])
	data := b[16:]
	if typ == rtfUncompressed {
		return data[:min(len(data), raw, max)], nil
	}
	if typ != rtfCompressed {
		return nil, fmt.Errorf("compressed RTF: unknown type %#x", typ)
	}
	var dict [4096]byte
	copy(dict[:], rtfPrebuf)
	w := len(rtfPrebuf)
	out := make([]byte, 0, min(raw, max))
	for i := 0; i < len(data); {
		ctrl := data[i]
		i++
		for bit := 0; bit < 8 && i < len(data); bit++ {
			if ctrl&(1<<bit) == 0 {
				c := data[i]
				i++
				out = append(out, c)
				dict[w] = c
				w = (w + 1) % len(dict)
			} else {
				if i+1 >= len(data) {
					return out, io.ErrUnexpectedEOF
				}
				v := int(data[i])<<8 | int(data[i+1])
				i += 2
				off, n := v>>4, v&0xF+2
				if off == w {
					return out, nil // the end marker
				}
				for k := 0; k < n; k++ {
					c := dict[(off+k)%len(dict)]
					out = append(out, c)
					dict[w] = c
					w = (w + 1) % len(dict)
				}
			}
			if len(out) >= max {
				return out[:max], nil
			}
		}
	}
	return out, nil
}

// rtfText reads RTF bytes as the RTF extractor does and returns its text.
func rtfText(ctx context.Context, b []byte, lim Limits) (string, error) {
	s := newSink(ctx, lim)
	in := input{r: strings.NewReader(string(b)), size: int64(len(b)), name: "body.rtf", mime: mimeRTF, lim: lim}
	if err := extractRTF(ctx, in, s); err != nil {
		return "", err
	}
	out := make([]string, 0, len(s.objs))
	for _, o := range s.objs {
		out = append(out, o.Data)
	}
	return strings.Join(out, "\n\n"), nil
}

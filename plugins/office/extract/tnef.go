package extract

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path"
	"strings"
)

// TNEF (MS-OXTNEF): Outlook and Exchange send a rich-text mail's
// attachments, and often its body, inside one winmail.dat
// (application/ms-tnef) that mail readers other than Outlook show as an
// unreadable file. readTNEF takes its files and body out, so they are the
// mail's own attachments and text.

// tnefSignature starts every TNEF stream.
const tnefSignature = 0x223E9F78

// TNEF attribute ids (MS-OXTNEF 2.1.3.3), type in the high word.
const (
	attBody           = 0x0002800C
	attAttachRendData = 0x00069002
	attAttachTitle    = 0x00018010
	attAttachData     = 0x0006800F
	attAttachment     = 0x00069005 // the attachment's MAPI properties
	attMsgProps       = 0x00069003 // the message's MAPI properties
)

// MAPI property ids read from the property lists.
const (
	prBody          = 0x1000
	prRTFCompressed = 0x1009
	prAttachLong    = 0x3707 // PR_ATTACH_LONG_FILENAME
)

// tnefFile is one attached file of a TNEF stream.
type tnefFile struct {
	name string
	data []byte
}

// isTNEF reports whether a part is a TNEF stream.
func isTNEF(ct, name string, data []byte) bool {
	return (ct == "application/ms-tnef" || ct == "application/vnd.ms-tnef" || strings.EqualFold(path.Base(name), "winmail.dat")) &&
		len(data) >= 6 && binary.LittleEndian.Uint32(data) == tnefSignature
}

// readTNEF reads a TNEF stream's attachments and body (its plain body, or
// its compressed RTF read as text). A damaged stream keeps what came
// before the damage; err says where it stopped.
func readTNEF(b []byte, lim Limits) (files []tnefFile, body string, err error) {
	if len(b) < 6 || binary.LittleEndian.Uint32(b) != tnefSignature {
		return nil, "", fmt.Errorf("%w: not a TNEF stream", ErrMalformed)
	}
	files, body, err = readTNEFAttributes(b, lim)
	keep := files[:0]
	for k, f := range files {
		if f.data == nil {
			continue // an embedded message or OLE object, or cut before its data
		}
		if f.name == "" {
			f.name = fmt.Sprintf("attachment-%d.bin", k+1)
		}
		keep = append(keep, f)
	}
	return keep, body, err
}

// readTNEFAttributes reads the attributes of a TNEF stream after its
// signature and key: every attachment begun (with its data or not) and the
// body.
func readTNEFAttributes(b []byte, lim Limits) (files []tnefFile, body string, err error) {
	var rtf []byte
	var cur *tnefFile
	for i := 6; i < len(b); {
		if i+9 > len(b) {
			return files, body, fmt.Errorf("%w: a TNEF attribute cut at byte %d", ErrMalformed, i)
		}
		level, id, n := b[i], binary.LittleEndian.Uint32(b[i+1:]), int(binary.LittleEndian.Uint32(b[i+5:]))
		if n < 0 || i+9+n+2 > len(b) {
			return files, body, fmt.Errorf("%w: a TNEF attribute of %d bytes past the end at byte %d", ErrMalformed, n, i)
		}
		data := b[i+9 : i+9+n]
		i += 9 + n + 2 // the checksum is not checked: a wrong one loses nothing
		switch {
		case level == 2 && id == attAttachRendData:
			if len(files) >= 1000 {
				return files, body, fmt.Errorf("%w: more than 1000 attachments in a TNEF stream", ErrLimit)
			}
			files = append(files, tnefFile{})
			cur = &files[len(files)-1]
		case level == 2 && cur != nil && id == attAttachTitle && cur.name == "":
			cur.name = decodeHeader(string(bytes.TrimRight(data, "\x00")))
		case level == 2 && cur != nil && id == attAttachData:
			cur.data = data
		case level == 2 && cur != nil && id == attAttachment:
			if v, ok := mapiProp(data, prAttachLong); ok {
				cur.name = v.text()
			}
		case level == 1 && id == attBody:
			body = decodeText(bytes.TrimRight(data, "\x00"))
		case level == 1 && id == attMsgProps:
			if v, ok := mapiProp(data, prBody); ok && body == "" {
				body = v.text()
			}
			if v, ok := mapiProp(data, prRTFCompressed); ok {
				rtf = v.raw
			}
		}
	}
	if strings.TrimSpace(body) == "" && rtf != nil {
		if r, err := decompressRTF(rtf, int(lim.MaxPartBytes)); err == nil {
			if t, err := rtfText(context.Background(), r, lim); err == nil {
				body = t
			}
		}
	}
	return files, body, nil
}

// mapiValue is one MAPI property's value.
type mapiValue struct {
	typ uint16
	raw []byte
}

// text is a string property's value: PT_UNICODE as UTF-16LE, PT_STRING8
// in the stream's code page (by detection).
func (v mapiValue) text() string {
	b := v.raw
	if v.typ == 0x001F {
		return strings.TrimRight(utf16LE(b), "\x00")
	}
	return decodeText(bytes.TrimRight(b, "\x00"))
}

// mapiProp finds property id in a TNEF MAPI property list (MS-OXTNEF
// 2.1.3.4): a count, then each property's type, id, for a named property
// its GUID and name, and its value or values. A list it cannot follow
// (a type it does not know) ends the search.
func mapiProp(b []byte, want uint16) (mapiValue, bool) {
	r := &tnefReader{b: b}
	count := r.u32()
	for k := uint32(0); k < count && k < 10_000 && r.ok(); k++ {
		typ, id := r.u16(), r.u16()
		if id >= 0x8000 { // a named property: GUID, kind, then an id or a name
			r.skip(16)
			if r.u32() == 0 {
				r.skip(4)
			} else {
				r.skip(pad4(int(r.u32())))
			}
		}
		multi := typ&0x1000 != 0
		base := typ &^ 0x1000
		n := uint32(1)
		if multi || base == 0x001E || base == 0x001F || base == 0x0102 || base == 0x000D {
			n = r.u32()
		}
		var first []byte
		for j := uint32(0); j < n && j < 10_000 && r.ok(); j++ {
			var v []byte
			switch base {
			case 0x001E, 0x001F, 0x0102, 0x000D:
				size := int(r.u32())
				v = r.take(size)
				r.skip(pad4(size) - size)
			case 0x0002, 0x000B: // PT_SHORT, PT_BOOLEAN: 4 bytes with padding
				v = r.take(4)
			case 0x0003, 0x0004, 0x000A: // PT_LONG, PT_FLOAT, PT_ERROR
				v = r.take(4)
			case 0x0005, 0x0006, 0x0007, 0x0014, 0x0040: // double, currency, apptime, int64, systime
				v = r.take(8)
			case 0x0048: // PT_CLSID
				v = r.take(16)
			default:
				return mapiValue{}, false
			}
			if j == 0 {
				first = v
			}
		}
		if id == want && r.ok() {
			return mapiValue{typ: base, raw: first}, true
		}
	}
	return mapiValue{}, false
}

// tnefReader reads little-endian values; a read past the end sets bad.
type tnefReader struct {
	b   []byte
	i   int
	bad bool
}

func (r *tnefReader) ok() bool { return !r.bad }

func (r *tnefReader) take(n int) []byte {
	if n < 0 || r.i+n > len(r.b) {
		r.bad = true
		return nil
	}
	v := r.b[r.i : r.i+n]
	r.i += n
	return v
}

func (r *tnefReader) skip(n int) { r.take(n) }

func (r *tnefReader) u16() uint16 {
	if v := r.take(2); v != nil {
		return binary.LittleEndian.Uint16(v)
	}
	return 0
}

func (r *tnefReader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

// pad4 rounds n up to a multiple of 4.
func pad4(n int) int { return (n + 3) &^ 3 }

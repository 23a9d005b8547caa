// Package wasmbin reads and rewrites WebAssembly binaries at the section level:
// it lists sections, reads and replaces custom sections, and encodes LEB128.
// It never executes anything, so it is safe on untrusted input; every length is
// checked against the buffer before use.
package wasmbin

import (
	"bytes"
	"errors"
	"fmt"
)

// Magic and version open every Wasm 1.0 module.
var header = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}

// ErrMalformed wraps every structural problem found in a binary.
var ErrMalformed = errors.New("malformed wasm binary")

// Section IDs of the Wasm 1.0 binary format.
const (
	SecCustom    byte = 0
	SecType      byte = 1
	SecImport    byte = 2
	SecFunction  byte = 3
	SecTable     byte = 4
	SecMemory    byte = 5
	SecGlobal    byte = 6
	SecExport    byte = 7
	SecStart     byte = 8
	SecElement   byte = 9
	SecCode      byte = 10
	SecData      byte = 11
	SecDataCount byte = 12
)

// Section is one section of a module. Payload aliases the parsed buffer.
type Section struct {
	ID      byte
	Name    string // custom sections only
	Payload []byte // for custom sections: the bytes after the name
}

// Parse splits a module into its sections, in order.
func Parse(b []byte) ([]Section, error) {
	if len(b) < 8 || !bytes.Equal(b[:8], header) {
		return nil, fmt.Errorf("%w: not a wasm 1.0 module (bad magic or version)", ErrMalformed)
	}
	var out []Section
	r := &Reader{b: b, off: 8}
	for r.Len() > 0 {
		id, err := r.Byte()
		if err != nil {
			return nil, err
		}
		size, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("section %d size: %w", id, err)
		}
		body, err := r.Bytes(int(size))
		if err != nil {
			return nil, fmt.Errorf("section %d body: %w", id, err)
		}
		s := Section{ID: id, Payload: body}
		if id == SecCustom {
			cr := &Reader{b: body}
			name, err := cr.Name()
			if err != nil {
				return nil, fmt.Errorf("custom section name: %w", err)
			}
			s.Name = name
			s.Payload = body[cr.off:]
		}
		out = append(out, s)
	}
	return out, nil
}

// Encode writes sections back into a module.
func Encode(secs []Section) []byte {
	var buf bytes.Buffer
	buf.Write(header)
	for _, s := range secs {
		body := s.Payload
		if s.ID == SecCustom {
			var nb []byte
			nb = AppendU32(nb, uint32(len(s.Name)))
			nb = append(nb, s.Name...)
			body = append(nb, s.Payload...)
		}
		buf.WriteByte(s.ID)
		buf.Write(AppendU32(nil, uint32(len(body))))
		buf.Write(body)
	}
	return buf.Bytes()
}

// CustomSection returns the payload of the first custom section with the given name.
func CustomSection(module []byte, name string) ([]byte, bool, error) {
	secs, err := Parse(module)
	if err != nil {
		return nil, false, err
	}
	for _, s := range secs {
		if s.ID == SecCustom && s.Name == name {
			return s.Payload, true, nil
		}
	}
	return nil, false, nil
}

// SetCustomSection returns a copy of module in which the custom section name holds
// payload: an existing one is replaced in place, otherwise it is appended.
func SetCustomSection(module []byte, name string, payload []byte) ([]byte, error) {
	secs, err := Parse(module)
	if err != nil {
		return nil, err
	}
	replaced := false
	out := secs[:0:0]
	for _, s := range secs {
		if s.ID == SecCustom && s.Name == name {
			if replaced {
				continue
			}
			s.Payload = payload
			replaced = true
		}
		out = append(out, s)
	}
	if !replaced {
		out = append(out, Section{ID: SecCustom, Name: name, Payload: payload})
	}
	return Encode(out), nil
}

// RemoveCustomSection returns a copy of module without any custom section name.
func RemoveCustomSection(module []byte, name string) ([]byte, error) {
	secs, err := Parse(module)
	if err != nil {
		return nil, err
	}
	out := secs[:0:0]
	for _, s := range secs {
		if s.ID == SecCustom && s.Name == name {
			continue
		}
		out = append(out, s)
	}
	return Encode(out), nil
}

// Reader decodes the primitive encodings of the binary format.
type Reader struct {
	b   []byte
	off int
}

// NewReader reads b from its start.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Len is the number of unread bytes.
func (r *Reader) Len() int { return len(r.b) - r.off }

// Offset is the number of bytes read so far.
func (r *Reader) Offset() int { return r.off }

// Byte reads one byte.
func (r *Reader) Byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, fmt.Errorf("%w: unexpected end at offset %d", ErrMalformed, r.off)
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

// Bytes reads n bytes (aliasing the buffer).
func (r *Reader) Bytes(n int) ([]byte, error) {
	if n < 0 || n > r.Len() {
		return nil, fmt.Errorf("%w: %d bytes wanted at offset %d, %d left", ErrMalformed, n, r.off, r.Len())
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p, nil
}

// U32 reads an unsigned LEB128 of at most 32 bits.
func (r *Reader) U32() (uint32, error) {
	// Most indices and counts fit in one byte: this path is what keeps
	// decoding every instruction of a large module cheap.
	if r.off < len(r.b) && r.b[r.off] < 0x80 {
		r.off++
		return uint32(r.b[r.off-1]), nil
	}
	v, err := r.uleb(32)
	return uint32(v), err
}

// U64 reads an unsigned LEB128 of at most 64 bits.
func (r *Reader) U64() (uint64, error) { return r.uleb(64) }

// S32 reads a signed LEB128 of at most 32 bits.
func (r *Reader) S32() (int32, error) {
	v, err := r.sleb(32)
	return int32(v), err
}

// S33 reads a signed LEB128 of at most 33 bits (block types).
func (r *Reader) S33() (int64, error) { return r.sleb(33) }

// S64 reads a signed LEB128 of at most 64 bits.
func (r *Reader) S64() (int64, error) { return r.sleb(64) }

// Name reads a length-prefixed UTF-8 string.
func (r *Reader) Name() (string, error) {
	n, err := r.U32()
	if err != nil {
		return "", err
	}
	p, err := r.Bytes(int(n))
	if err != nil {
		return "", err
	}
	return string(p), nil
}

func (r *Reader) uleb(bits uint) (uint64, error) {
	var v uint64
	var shift uint
	for i := 0; ; i++ {
		if i >= int((bits+6)/7) {
			return 0, fmt.Errorf("%w: LEB128 too long at offset %d", ErrMalformed, r.off)
		}
		c, err := r.Byte()
		if err != nil {
			return 0, err
		}
		if shift+7 > bits && c>>(bits-shift) != 0 {
			// The last byte may only carry the bits that remain (and no
			// continuation): wazero refuses more, and so must we, or the
			// two would read different values from the same bytes.
			return 0, fmt.Errorf("%w: LEB128 overflows %d bits at offset %d", ErrMalformed, bits, r.off-1)
		}
		v |= uint64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			return v, nil
		}
	}
}

func (r *Reader) sleb(bits uint) (int64, error) {
	var v int64
	var shift uint
	var c byte
	for i := 0; ; i++ {
		if i >= int((bits+6)/7) {
			return 0, fmt.Errorf("%w: LEB128 too long at offset %d", ErrMalformed, r.off)
		}
		var err error
		c, err = r.Byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			break
		}
	}
	if shift < 64 && c&0x40 != 0 {
		v |= -1 << shift
	}
	return v, nil
}

// AppendU32 appends v as unsigned LEB128.
func AppendU32(b []byte, v uint32) []byte { return AppendU64(b, uint64(v)) }

// AppendU64 appends v as unsigned LEB128.
func AppendU64(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// AppendS64 appends v as signed LEB128.
func AppendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// AppendName appends a length-prefixed string.
func AppendName(b []byte, s string) []byte {
	b = AppendU32(b, uint32(len(s)))
	return append(b, s...)
}

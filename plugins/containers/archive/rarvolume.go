package archive

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// rarVolume is what a RAR archive's first headers say about volumes. A
// multi-volume set arrives here one file at a time (each upload is its own
// input), so a volume is read only as far as it goes, and the report says
// why the rest is missing instead of calling the bytes corrupt, which is
// what the decoder reports when a volume starts or ends mid-entry.
type rarVolume struct {
	multi  bool // the file is one volume of a multi-volume set
	later  bool // a volume after the set's first: its first entry began in another volume
	number int  // 1-based volume number when the headers give it, else 0
}

// rarVolumeHeadSize is how many leading bytes sniffRarVolume reads: the
// signature, the main header and the start of the first file header.
const rarVolumeHeadSize = 512

var (
	rar4Signature = []byte("Rar!\x1a\x07\x00")
	rar5Signature = []byte("Rar!\x1a\x07\x01\x00")
)

// sniffRarVolume reads the volume flags of a RAR 4 or 5 archive from its
// leading bytes. Anything it cannot read (a self-extracting stub before the
// signature, encrypted headers, a short file) gives the zero value: the
// decoder then reports what it finds.
func sniffRarVolume(b []byte) rarVolume {
	switch {
	case bytes.HasPrefix(b, rar5Signature):
		return sniffRar5Volume(b[len(rar5Signature):])
	case bytes.HasPrefix(b, rar4Signature):
		return sniffRar4Volume(b[len(rar4Signature):])
	}
	return rarVolume{}
}

// RAR 4 (RAR 1.5-4.x format, "technote"): a main header of type 0x73 whose
// flags mark a volume (0x0001) and, since RAR 3.0, the set's first volume
// (0x0100); a file header (0x74) whose flag 0x0001 says its data began in
// the previous volume.
func sniffRar4Volume(b []byte) rarVolume {
	const (
		mainHead        = 0x73
		fileHead        = 0x74
		volumeFlag      = 0x0001
		newNumbering    = 0x0010
		firstVolumeFlag = 0x0100
		splitBefore     = 0x0001
	)
	if len(b) < 7 || b[2] != mainHead {
		return rarVolume{}
	}
	flags := binary.LittleEndian.Uint16(b[3:])
	if flags&volumeFlag == 0 {
		return rarVolume{}
	}
	v := rarVolume{multi: true}
	if flags&firstVolumeFlag != 0 {
		v.number = 1
		return v
	}
	if flags&newNumbering != 0 {
		// Written by RAR 3.0 or later, which marks the first volume: this is not it.
		v.later = true
		return v
	}
	// Older archives: the first file header says whether its data began earlier.
	size := int(binary.LittleEndian.Uint16(b[5:]))
	if size < 7 || len(b) < size+7 {
		return v
	}
	f := b[size:]
	if f[2] == fileHead && binary.LittleEndian.Uint16(f[3:])&splitBefore != 0 {
		v.later = true
	}
	return v
}

// RAR 5: after the signature, a header (CRC32, size, type, flags, optional
// extra and data sizes, all but the CRC variable-length integers); the main
// archive header (type 1) carries archive flags, 0x0001 "volume" and 0x0002
// "volume number present", the number counting from 0 and absent in the
// first volume. Archives with encrypted headers start with a type 4 header
// and are left to the decoder.
func sniffRar5Volume(b []byte) rarVolume {
	const (
		mainHead        = 1
		extraArea       = 0x0001
		dataArea        = 0x0002
		volumeFlag      = 0x0001
		volumeNumberSet = 0x0002
	)
	if len(b) < 4 {
		return rarVolume{}
	}
	r := vintReader{b: b[4:]}
	r.next() // header size
	if typ := r.next(); typ != mainHead {
		return rarVolume{}
	}
	hflags := r.next()
	if hflags&extraArea != 0 {
		r.next()
	}
	if hflags&dataArea != 0 {
		r.next()
	}
	aflags := r.next()
	if r.bad || aflags&volumeFlag == 0 {
		return rarVolume{}
	}
	v := rarVolume{multi: true, number: 1}
	if aflags&volumeNumberSet != 0 {
		n := r.next()
		if r.bad || n > 1<<20 {
			return rarVolume{multi: true}
		}
		v.number = int(n) + 1
		v.later = n > 0
	}
	return v
}

// vintReader reads RAR 5's variable-length integers (7 bits a byte, low
// first, high bit set on all but the last byte); bad is set on a short or
// overlong one.
type vintReader struct {
	b   []byte
	bad bool
}

func (r *vintReader) next() uint64 {
	var v uint64
	for i := 0; i < 10 && len(r.b) > 0; i++ {
		c := r.b[0]
		r.b = r.b[1:]
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	r.bad = true
	return 0
}

// describe says which volume this is, for a report.
func (v rarVolume) describe() string {
	if v.number > 0 {
		return fmt.Sprintf("volume %d of a multi-volume RAR archive", v.number)
	}
	return "a later volume of a multi-volume RAR archive"
}

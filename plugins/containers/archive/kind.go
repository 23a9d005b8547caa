package archive

import (
	"bytes"
	"encoding/binary"
	"path"
	"strings"
)

// Kind is a container format.
type Kind uint8

const (
	None Kind = iota
	Zip
	Tar
	Gzip
	// Bzip2 and Xz are compressed streams like Gzip: one file, or a tar
	// (.tar.bz2, .tar.xz) read in one pass.
	Bzip2
	Xz
	// SevenZip and Rar are archives with their own directories.
	SevenZip
	Rar
	// Zstd is a compressed stream (.zst, .tar.zst) like Gzip.
	Zstd
)

func (k Kind) String() string {
	switch k {
	case Zip:
		return "zip"
	case Tar:
		return "tar"
	case Gzip:
		return "gzip"
	case Bzip2:
		return "bzip2"
	case Xz:
		return "xz"
	case SevenZip:
		return "7z"
	case Rar:
		return "rar"
	case Zstd:
		return "zstd"
	}
	return "none"
}

// HeadSize is how many leading bytes Detect and MIME sniffing look at.
const HeadSize = 512

// zipDocuments are zip-based document formats. They are files for an
// extractor, not containers to unpack: their parts mean nothing alone.
var zipDocuments = map[string]bool{
	".docx": true, ".docm": true, ".dotx": true, ".dotm": true,
	".xlsx": true, ".xlsm": true, ".xltx": true, ".xltm": true, ".xlsb": true,
	".pptx": true, ".pptm": true, ".potx": true, ".potm": true, ".ppsx": true, ".ppsm": true,
	".vsdx": true, ".xps": true, ".oxps": true, ".3mf": true,
	".odt": true, ".ods": true, ".odp": true, ".odg": true, ".odf": true,
	".ott": true, ".ots": true, ".otp": true, ".epub": true,
}

// Magic numbers of the formats recognised by their first bytes.
const (
	magicXz    = "\xfd7zXZ\x00"
	magic7z    = "7z\xbc\xaf\x27\x1c"
	magicRar4  = "Rar!\x1a\x07\x00"
	magicRar5  = "Rar!\x1a\x07\x01\x00"
	magicBzip2 = "BZh"
	magicZstd  = "\x28\xb5\x2f\xfd"
)

// Detect tells the container format from the first bytes (HeadSize is
// enough) and the name. Magic bytes decide, so a renamed archive is still
// found; the name only keeps zip-based documents (DOCX, XLSX, PPTX, ODF, EPUB)
// out, as does a first member called "[Content_Types].xml" or "mimetype".
// A v7 tar without the ustar magic is recognised by its header checksum.
func Detect(head []byte, name string) Kind {
	switch {
	case isZip(head):
		if zipDocuments[strings.ToLower(path.Ext(name))] || isZipDocument(head) {
			return None
		}
		return Zip
	case len(head) >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8:
		return Gzip
	case isBzip2(head):
		return Bzip2
	case bytes.HasPrefix(head, []byte(magicXz)):
		return Xz
	case bytes.HasPrefix(head, []byte(magicZstd)):
		return Zstd
	case bytes.HasPrefix(head, []byte(magic7z)):
		return SevenZip
	case bytes.HasPrefix(head, []byte(magicRar4)), bytes.HasPrefix(head, []byte(magicRar5)):
		return Rar
	case isTar(head):
		return Tar
	}
	return None
}

// isBzip2: "BZh", the block size digit, then the magic of a first block
// (π) or of the end of an empty stream (√π).
func isBzip2(head []byte) bool {
	if len(head) < 10 || !bytes.HasPrefix(head, []byte(magicBzip2)) || head[3] < '1' || head[3] > '9' {
		return false
	}
	block := string(head[4:10])
	return block == "\x31\x41\x59\x26\x53\x59" || block == "\x17\x72\x45\x38\x50\x90"
}

func isZip(head []byte) bool {
	if len(head) < 4 || head[0] != 'P' || head[1] != 'K' {
		return false
	}
	switch binary.LittleEndian.Uint32(head) {
	case sigLocal, sigEnd:
		return true
	case sigDescriptor: // the spanning marker precedes the first local header
		return len(head) >= 8 && binary.LittleEndian.Uint32(head[4:]) == sigLocal
	}
	return false
}

// isZipDocument looks at the first local header's name: OOXML packages start
// with "[Content_Types].xml" and ODF/EPUB with "mimetype" by convention.
func isZipDocument(head []byte) bool {
	if len(head) < 30 || binary.LittleEndian.Uint32(head) != sigLocal {
		return false
	}
	n := int(binary.LittleEndian.Uint16(head[26:]))
	if 30+n > len(head) {
		return false
	}
	first := string(head[30 : 30+n])
	return first == "[Content_Types].xml" || first == "mimetype"
}

func isTar(head []byte) bool {
	if len(head) < 512 || head[0] == 0 {
		return false
	}
	if bytes.Equal(head[257:263], []byte("ustar\x00")) || bytes.Equal(head[257:265], []byte("ustar  \x00")) {
		return true
	}
	// v7: the checksum is the sum of the header's bytes with its own field
	// read as spaces, written in octal.
	field := strings.Trim(string(head[148:156]), " \x00")
	if field == "" {
		return false
	}
	var want int64
	for _, c := range field {
		if c < '0' || c > '7' {
			return false
		}
		want = want*8 + int64(c-'0')
	}
	var sum int64
	for i, b := range head[:512] {
		if i >= 148 && i < 156 {
			b = ' '
		}
		sum += int64(b)
	}
	return sum == want
}

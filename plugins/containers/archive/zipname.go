package archive

import (
	"encoding/binary"
	"hash/crc32"
	"unicode/utf8"

	"github.com/agenthost/agenthost/plugins/textenc"
)

// zipName decodes a raw zip name: UTF-8 when it is (many tools write UTF-8
// without setting the flag), else the DOS code page that reads it best
// (textenc.DecodeName): code page 437, the format's default, or GBK,
// Shift-JIS, Big5, EUC-KR or cp866 for the names a Chinese, Japanese,
// Korean or Russian Windows wrote. Every path stays valid UTF-8 for JSON and
// the UI.
func zipName(raw []byte) string {
	name, _ := textenc.DecodeName(raw)
	return name
}

// extraUnicodePath is the Info-ZIP Unicode Path extra field's ID (APPNOTE
// 4.6.9): the entry's name in UTF-8, beside a main name in the DOS code
// page, as 7-Zip and WinRAR write it.
const extraUnicodePath = 0x7075

// zipNameWith decodes an entry's name, preferring the Unicode Path extra
// field when it is there and its CRC-32 matches the main name (else the
// name was renamed by a tool that did not know the field).
func zipNameWith(raw, extra []byte) string {
	for len(extra) >= 4 {
		id, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		if 4+n > len(extra) {
			break
		}
		if f := extra[4 : 4+n]; id == extraUnicodePath && len(f) > 5 && f[0] == 1 &&
			binary.LittleEndian.Uint32(f[1:]) == crc32.ChecksumIEEE(raw) && utf8.Valid(f[5:]) {
			return string(f[5:])
		}
		extra = extra[4+n:]
	}
	return zipName(raw)
}

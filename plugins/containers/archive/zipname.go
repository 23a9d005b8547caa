package archive

import "github.com/agenthost/agenthost/plugins/textenc"

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

package extract

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"mime"
	"net/mail"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/agenthost/agenthost/plugins/textenc"
)

// An Outlook message (.msg) is an OLE compound file ([MS-OXMSG]): each
// property of the message is a stream "__substg1.0_IIIITTTT" (IIII the
// property's id, TTTT its type: 001F UTF-16LE text, 001E 8-bit text in the
// message's code page, 0102 binary), fixed-size ones (dates, numbers) are
// 16-byte records in "__properties_version1.0"; recipients and
// attachments are storages "__recip_version1.0_#N" and
// "__attach_version1.0_#N", and an attached Outlook message is a storage
// "__substg1.0_3701000D" inside its attachment's, read the same way.

// Property ids ([MS-OXPROPS]).
const (
	pidSubject          = 0x0037
	pidClientSubmitTime = 0x0039
	pidTransportHeaders = 0x007D
	pidRecipientType    = 0x0C15
	pidSenderName       = 0x0C1A
	pidSenderEmail      = 0x0C1F
	pidDisplayCc        = 0x0E03
	pidDisplayTo        = 0x0E04
	pidDeliveryTime     = 0x0E06
	pidBody             = 0x1000
	pidRTFCompressed    = 0x1009
	pidHTML             = 0x1013
	pidMessageID        = 0x1035
	pidDisplayName      = 0x3001
	pidEmailAddress     = 0x3003
	pidAttachData       = 0x3701
	pidAttachFilename   = 0x3704
	pidAttachMethod     = 0x3705
	pidAttachLongName   = 0x3707
	pidAttachMIME       = 0x370E
	pidSMTPAddress      = 0x39FE
	pidInternetCodepage = 0x3FDE
	pidMessageCodepage  = 0x3FFD
	pidSenderSMTP       = 0x5D01
)

// msgDepth bounds messages embedded in messages while one is converted.
const msgDepth = 6

// msgReader reads the properties of one message (or recipient, or
// attachment) storage.
type msgReader struct {
	o        *oleFile
	prefix   string // the storage's path, "" or ending in "/"
	codepage string // the charset of 8-bit strings
	fixed    map[uint16][8]byte
}

// newMsgReader reads the storage's fixed properties; header is the length
// of the properties stream's header (32 for the message, 24 for an
// embedded one, 8 for a recipient or an attachment).
func newMsgReader(o *oleFile, prefix string, header int, codepage string) *msgReader {
	m := &msgReader{o: o, prefix: prefix, codepage: codepage, fixed: map[uint16][8]byte{}}
	if b, err := o.readPath(prefix + "__properties_version1.0"); err == nil && len(b) >= header {
		for p := b[header:]; len(p) >= 16; p = p[16:] {
			var v [8]byte
			copy(v[:], p[8:16])
			m.fixed[uint16(binary.LittleEndian.Uint32(p)>>16)] = v
		}
	}
	if m.codepage == "" {
		for _, id := range []uint16{pidInternetCodepage, pidMessageCodepage} {
			if v, ok := m.fixed[id]; ok {
				if cs := codepageCharset(binary.LittleEndian.Uint32(v[:])); cs != "" {
					m.codepage = cs
					break
				}
			}
		}
	}
	return m
}

// codepageCharset names a Windows code page's charset.
func codepageCharset(cp uint32) string {
	switch {
	case cp >= 1250 && cp <= 1258:
		return "windows-" + strconv.Itoa(int(cp))
	case cp == 65001:
		return "utf-8"
	case cp == 932:
		return "shift_jis"
	case cp == 936:
		return "gbk"
	case cp == 949:
		return "euc-kr"
	case cp == 950:
		return "big5"
	case cp == 866:
		return "ibm866"
	case cp == 20866:
		return "koi8-r"
	case cp == 21866:
		return "koi8-u"
	case cp == 874:
		return "windows-874"
	case cp >= 28591 && cp <= 28599:
		return "iso-8859-" + strconv.Itoa(int(cp-28590))
	}
	return ""
}

func (m *msgReader) stream(id uint16, typ string) ([]byte, bool) {
	b, err := m.o.readPath(fmt.Sprintf("%s__substg1.0_%04X%s", m.prefix, id, typ))
	return b, err == nil
}

// str is a text property, "" when absent.
func (m *msgReader) str(id uint16) string {
	if b, ok := m.stream(id, "001F"); ok {
		return strings.TrimRight(utf16LE(b), "\x00")
	}
	if b, ok := m.stream(id, "001E"); ok {
		t, _ := textenc.Decode(bytes.TrimRight(b, "\x00"), m.codepage)
		return t
	}
	return ""
}

// bin is a binary property.
func (m *msgReader) bin(id uint16) ([]byte, bool) { return m.stream(id, "0102") }

// long is a 32-bit fixed property.
func (m *msgReader) long(id uint16) (uint32, bool) {
	v, ok := m.fixed[id]
	return binary.LittleEndian.Uint32(v[:]), ok
}

// timeOf is a PT_SYSTIME fixed property (a FILETIME: 100 ns since 1601).
func (m *msgReader) timeOf(id uint16) (time.Time, bool) {
	v, ok := m.fixed[id]
	ft := binary.LittleEndian.Uint64(v[:])
	if !ok || ft == 0 {
		return time.Time{}, false
	}
	const epochDiff = 116444736000000000 // 1601 to 1970 in 100 ns
	if ft < epochDiff {
		return time.Time{}, false
	}
	return time.Unix(0, 0).Add(time.Duration(ft-epochDiff) * 100).UTC(), true
}

func utf16LE(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// readMSG reads the message stored at prefix; header is its properties
// stream's header length, depth its nesting (0 for the file's own).
func readMSG(o *oleFile, prefix string, header, depth int) *mailMsg {
	r := newMsgReader(o, prefix, header, "")
	m := &mailMsg{subject: r.str(pidSubject), messageID: r.str(pidMessageID)}
	sender, addr := r.str(pidSenderName), r.str(pidSenderSMTP)
	if addr == "" {
		if a := r.str(pidSenderEmail); strings.Contains(a, "@") {
			addr = a
		}
	}
	m.from = addressOf(sender, addr)
	headers := r.str(pidTransportHeaders)
	var th mail.Header
	if headers != "" {
		if msg, err := mail.ReadMessage(strings.NewReader(strings.TrimSpace(headers) + "\r\n\r\n")); err == nil {
			th = msg.Header
		}
	}
	if m.from == "" && th != nil {
		m.from = decodeHeader(th.Get("From"))
	}
	if t, ok := r.timeOf(pidClientSubmitTime); ok {
		m.date = t.Format(time.RFC3339)
	} else if t, ok := r.timeOf(pidDeliveryTime); ok {
		m.date = t.Format(time.RFC3339)
	} else if th != nil {
		if t, err := mail.ParseDate(th.Get("Date")); err == nil {
			m.date = t.UTC().Format(time.RFC3339)
		}
	}
	// Recipients with their addresses; the display lists when there are
	// no recipient storages.
	var to, cc []string
	for _, name := range o.children(prefix) {
		if !strings.HasPrefix(name, "__recip_version1.0_#") {
			continue
		}
		rr := newMsgReader(o, prefix+name+"/", 8, r.codepage)
		a := rr.str(pidSMTPAddress)
		if a == "" {
			if e := rr.str(pidEmailAddress); strings.Contains(e, "@") {
				a = e
			}
		}
		who := addressOf(rr.str(pidDisplayName), a)
		if typ, _ := rr.long(pidRecipientType); typ == 2 {
			cc = append(cc, who)
		} else if typ != 3 { // 3 is Bcc
			to = append(to, who)
		}
	}
	m.to, m.cc = strings.Join(to, ", "), strings.Join(cc, ", ")
	if m.to == "" {
		m.to = r.str(pidDisplayTo)
	}
	if m.cc == "" {
		m.cc = r.str(pidDisplayCc)
	}
	switch {
	case strings.TrimSpace(r.str(pidBody)) != "":
		m.body, m.bodyType = strings.TrimSpace(r.str(pidBody)), "text/plain"
	default:
		h, ok := r.bin(pidHTML)
		if !ok {
			if s := r.str(pidHTML); s != "" {
				h, ok = []byte(s), true
			}
		}
		if ok {
			t, _ := decodeTextAs(h, r.codepage)
			m.body, m.bodyType = htmlToText(t, o.lim), "text/html"
		} else if c, ok := r.bin(pidRTFCompressed); ok {
			rtf, err := decompressRTF(c, int(o.lim.MaxPartBytes))
			if err == nil {
				var t string
				if t, err = rtfText(context.Background(), rtf, o.lim); err == nil {
					m.body, m.bodyType = strings.TrimSpace(t), "application/rtf"
				}
			}
			if err != nil {
				m.stops = append(m.stops, "the body, kept only as compressed RTF, is not readable: "+err.Error())
			}
		}
	}
	for _, name := range o.children(prefix) {
		if !strings.HasPrefix(name, "__attach_version1.0_#") {
			continue
		}
		m.parts++
		ap := prefix + name + "/"
		ar := newMsgReader(o, ap, 8, r.codepage)
		fname := ar.str(pidAttachLongName)
		if fname == "" {
			fname = ar.str(pidAttachFilename)
		}
		if fname == "" {
			fname = ar.str(pidDisplayName)
		}
		if method, _ := ar.long(pidAttachMethod); method == 5 || o.has2(ap+"__substg1.0_3701000D") {
			if depth+1 >= msgDepth {
				m.stops = append(m.stops, fmt.Sprintf("messages embedded deeper than %d: %q is not read", msgDepth, fname))
				continue
			}
			inner := readMSG(o, ap+"__substg1.0_3701000D/", 24, depth+1)
			if fname == "" {
				fname = inner.subject
			}
			if fname == "" {
				fname = "message"
			}
			m.atts = append(m.atts, mailAttachment{name: fname + ".eml", mimeType: mimeEML, data: inner.eml(), message: true})
			continue
		}
		data, ok := ar.bin(pidAttachData)
		if !ok {
			continue // a link or an OLE object without a file
		}
		if fname == "" {
			fname = fmt.Sprintf("attachment-%d", m.parts)
		}
		mt := ar.str(pidAttachMIME)
		if mt == "" {
			mt = "application/octet-stream"
		}
		m.atts = append(m.atts, mailAttachment{name: fname, mimeType: mt, data: data})
	}
	return m
}

// has2: an entry at that path exists (stream or storage).
func (o *oleFile) has2(p string) bool { _, ok := o.all[p]; return ok }

// addressOf writes "Name <addr>", or whichever is known.
func addressOf(name, addr string) string {
	switch {
	case addr == "" || name == addr:
		return name
	case name == "":
		return addr
	}
	return (&mail.Address{Name: name, Address: addr}).String()
}

// eml writes a message read from an Outlook file as RFC 5322 with MIME, so
// an embedded message is an .eml entry that the mail extractor reads like
// any other, its own attachments included.
func (m *mailMsg) eml() []byte {
	var b bytes.Buffer
	hdr := func(k, v string) {
		if v != "" {
			b.WriteString(k + ": " + mime.QEncoding.Encode("utf-8", v) + "\r\n")
		}
	}
	hdr("From", m.from)
	hdr("To", m.to)
	hdr("Cc", m.cc)
	hdr("Subject", m.subject)
	if t, err := time.Parse(time.RFC3339, m.date); err == nil {
		b.WriteString("Date: " + t.Format(time.RFC1123Z) + "\r\n")
	}
	if m.messageID != "" {
		b.WriteString("Message-ID: " + m.messageID + "\r\n")
	}
	const boundary = "agenthost-msg-boundary-7f3a9c"
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"" + boundary + "\"\r\n\r\n")
	part := func(ct, disp string, data []byte) {
		b.WriteString("--" + boundary + "\r\nContent-Type: " + ct + "\r\n")
		if disp != "" {
			b.WriteString("Content-Disposition: " + disp + "\r\n")
		}
		b.WriteString("Content-Transfer-Encoding: base64\r\n\r\n")
		enc := base64.StdEncoding.EncodeToString(data)
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\r\n")
	}
	part("text/plain; charset=utf-8", "", []byte(m.body))
	for _, a := range m.atts {
		ct := a.mimeType
		if _, _, err := mime.ParseMediaType(ct); err != nil {
			ct = "application/octet-stream"
		}
		part(ct, mime.FormatMediaType("attachment", map[string]string{"filename": a.name}), a.data)
	}
	b.WriteString("--" + boundary + "--\r\n")
	return b.Bytes()
}

// extractMSG reads an Outlook message.
func extractMSG(ctx context.Context, o *oleFile, s *sink) error {
	m := readMSG(o, "", 32, 0)
	emitMail(s, m, o.lim)
	return nil
}

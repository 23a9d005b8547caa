package extract

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/plugins/textenc"
)

// Mail: an RFC 5322 message with MIME (.eml), an Outlook message (.msg,
// read from its OLE compound file in msg.go) or a mailbox of messages
// (.mbox). Each is read into a mailMsg: the headers as structure (from, to,
// cc, date, subject), the body as text (the plain-text part preferred, the
// HTML one as text otherwise) and the attached files, which the host takes
// through the attachments tool (Attachments) as a container's entries, each
// extracted by its own extractor ("mail.eml/report.pdf"); an attached
// message's own attachments follow below its path.

const (
	mimeEML  = "message/rfc822"
	mimeMbox = "application/mbox"
	mimeMSG  = "application/vnd.ms-outlook"
	// mimeMHTML is a web page saved as one MIME message (RFC 2557), as
	// browsers and Word write .mht files.
	mimeMHTML = "multipart/related"
)

// The bounds of one message's MIME tree: a real message has tens of parts
// and a few levels; a hostile one has ten thousand parts or nests
// multiparts until the stack gives out. Past a bound the rest is not read
// and the index says so.
const (
	maxMailParts = 1000
	maxMailDepth = 20
)

// mailMsg is one message as read.
type mailMsg struct {
	from, to, cc, date, subject, messageID string
	body                                   string // the body as text
	bodyType                               string // the part it came from: text/plain, text/html, "" for none
	atts                                   []mailAttachment
	parts                                  int
	stops                                  []string // where reading stopped early, and why
	// encrypted names the parts encrypted to the mail's recipients
	// (S/MIME, PGP), which no one but a recipient can read.
	encrypted []string
}

// mailAttachment is one attached file, or an attached message (as RFC 5322
// bytes: .eml; an Outlook message's embedded one is written as one).
type mailAttachment struct {
	name, mimeType string
	charset        string // a text part's declared charset
	data           []byte
	message        bool
}

// mailHeaderDecoder decodes RFC 2047 encoded-words in any charset
// golang.org/x/text knows.
var mailHeaderDecoder = &mime.WordDecoder{CharsetReader: func(label string, r io.Reader) (io.Reader, error) {
	e := textenc.Lookup(label)
	if e == nil {
		return nil, fmt.Errorf("unknown charset %q", label)
	}
	return e.NewDecoder().Reader(r), nil
}}

// decodeHeader decodes a header value: raw 8-bit bytes (legacy mailers
// wrote headers in their code page) by detection, encoded-words by their
// charset; a value that does not decode stays as it is.
func decodeHeader(v string) string {
	if !utf8.ValidString(v) {
		v, _ = textenc.Decode([]byte(v), "")
	}
	if d, err := mailHeaderDecoder.DecodeHeader(v); err == nil {
		v = d
	}
	return strings.Join(strings.Fields(v), " ")
}

// readMail parses an RFC 5322 message.
func readMail(b []byte, lim Limits) (*mailMsg, error) {
	// An mbox "From " line before the headers is not a header.
	if bytes.HasPrefix(b, []byte("From ")) {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		return nil, fmt.Errorf("%w: not an RFC 5322 message: %w", ErrMalformed, err)
	}
	if len(msg.Header) == 0 {
		return nil, fmt.Errorf("%w: not an RFC 5322 message: no headers", ErrMalformed)
	}
	m := &mailMsg{
		from: decodeHeader(msg.Header.Get("From")), to: decodeHeader(msg.Header.Get("To")),
		cc: decodeHeader(msg.Header.Get("Cc")), subject: decodeHeader(msg.Header.Get("Subject")),
		messageID: strings.TrimSpace(msg.Header.Get("Message-Id")),
	}
	if d := msg.Header.Get("Date"); d != "" {
		m.date = strings.TrimSpace(d)
		if t, err := mail.ParseDate(d); err == nil {
			m.date = t.UTC().Format(time.RFC3339)
		}
	}
	w := &mimeWalk{m: m, lim: lim}
	w.part(textproto.MIMEHeader(msg.Header), msg.Body, 0)
	switch {
	case strings.TrimSpace(strings.Join(w.plain, "")) != "":
		m.body, m.bodyType = strings.Join(w.plain, "\n\n"), "text/plain"
	case len(w.html) > 0:
		var out []string
		for _, h := range w.html {
			out = append(out, htmlToText(h, lim))
		}
		m.body, m.bodyType = strings.Join(out, "\n\n"), "text/html"
	case len(w.tnefBody) > 0:
		m.body, m.bodyType = strings.Join(w.tnefBody, "\n\n"), "application/ms-tnef"
	}
	m.parts = w.parts
	return m, nil
}

// mimeWalk reads a message's MIME tree.
type mimeWalk struct {
	m           *mailMsg
	lim         Limits
	parts       int
	plain, html []string
	tnefBody    []string // bodies of TNEF streams (winmail.dat)
	partsNoted  bool
}

// part reads one MIME entity at depth (the message itself is 0).
func (w *mimeWalk) part(h textproto.MIMEHeader, body io.Reader, depth int) {
	w.parts++
	if w.parts > maxMailParts {
		if !w.partsNoted {
			w.partsNoted = true
			w.m.stops = append(w.m.stops, fmt.Sprintf("the message has more than %d MIME parts (the limit): the rest is not read", maxMailParts))
		}
		return
	}
	ct, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || ct == "" {
		ct, params = "text/plain", map[string]string{}
	}
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	if ct == "multipart/encrypted" {
		// RFC 1847 / RFC 3156: a control part and the encrypted data,
		// nothing readable without a recipient's key.
		proto := params["protocol"]
		if proto == "" {
			proto = "unknown protocol"
		}
		w.m.encrypted = append(w.m.encrypted, "multipart/encrypted ("+proto+")")
		return
	}
	if strings.HasPrefix(ct, "multipart/") {
		if depth >= maxMailDepth {
			w.m.stops = append(w.m.stops, fmt.Sprintf("multiparts nested deeper than %d (the limit): the inner parts are not read", maxMailDepth))
			return
		}
		if params["boundary"] == "" {
			w.m.stops = append(w.m.stops, ct+" without a boundary: its parts are not read")
			return
		}
		mr := multipart.NewReader(body, params["boundary"])
		for w.parts <= maxMailParts {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				w.m.stops = append(w.m.stops, "a "+ct+" ends early: "+err.Error())
				return
			}
			w.part(p.Header, p, depth+1)
		}
		return
	}
	data, err := transferDecode(h.Get("Content-Transfer-Encoding"), body, w.lim.MaxPartBytes)
	if err != nil {
		w.m.stops = append(w.m.stops, fmt.Sprintf("part %d: %v", w.parts, err))
		if len(data) == 0 {
			return
		}
	}
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	name = decodeHeader(name)
	attached := disp == "attachment" || name != "" && disp != "inline"
	if what := encryptedPart(ct, params, data); what != "" {
		w.m.encrypted = append(w.m.encrypted, what)
		return
	}
	switch {
	case ct == "message/rfc822" || ct == "message/global":
		if name == "" {
			name = "message.eml"
			// Its headers only: a message nested ten thousand deep is not
			// read ten thousand times over.
			if msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(data))); err == nil {
				if subj := decodeHeader(msg.Header.Get("Subject")); subj != "" {
					name = subj + ".eml"
				}
			}
		}
		if path.Ext(name) == "" {
			name += ".eml"
		}
		w.m.atts = append(w.m.atts, mailAttachment{name: name, mimeType: mimeEML, data: data, message: true})
	case !attached && ct == "text/plain":
		t, _ := decodeTextAs(data, params["charset"])
		if strings.EqualFold(params["format"], "flowed") {
			t = unflow(t, strings.EqualFold(params["delsp"], "yes"))
		}
		t, uu := splitUU(t, w.lim.MaxPartBytes)
		for _, f := range uu {
			w.m.atts = append(w.m.atts, mailAttachment{name: f.name, mimeType: "application/octet-stream", data: f.data})
		}
		w.plain = append(w.plain, t)
	case !attached && ct == "text/html":
		t, _ := decodeTextAs(data, params["charset"])
		w.html = append(w.html, t)
	case !attached && (strings.HasPrefix(ct, "multipart/") || ct == "text/enriched" || ct == "text/rtf"):
	case isTNEF(ct, name, data):
		// winmail.dat: its files are the mail's attachments, its body the
		// mail's text when the mail has none of its own.
		files, body, err := readTNEF(data, w.lim)
		if err != nil {
			w.m.stops = append(w.m.stops, fmt.Sprintf("%s: %v", name, err))
		}
		for _, f := range files {
			w.m.atts = append(w.m.atts, mailAttachment{name: f.name, mimeType: "application/octet-stream", data: f.data})
		}
		if strings.TrimSpace(body) != "" {
			w.tnefBody = append(w.tnefBody, body)
		}
	default:
		if name == "" {
			name = fmt.Sprintf("part-%d%s", w.parts, extFor(ct))
		}
		w.m.atts = append(w.m.atts, mailAttachment{name: name, mimeType: ct, charset: params["charset"], data: data})
	}
}

// encryptedPart names a part encrypted to the mail's recipients, "" for
// any other: S/MIME enveloped data (application/pkcs7-mime, told from
// opaque signed data by its smime-type or, without one, by its content
// type's object identifier) and a PGP message (a text part or a file that
// is an armored "BEGIN PGP MESSAGE" block, which inline PGP mailers send).
func encryptedPart(ct string, params map[string]string, data []byte) string {
	switch ct {
	case "application/pkcs7-mime", "application/x-pkcs7-mime":
		switch st := strings.ToLower(params["smime-type"]); st {
		case "enveloped-data", "authenveloped-data":
			return "S/MIME " + st + " (" + ct + ")"
		case "signed-data", "certs-only", "compressed-data":
			return ""
		}
		if !pkcs7Signed(data) {
			return "S/MIME enveloped-data (" + ct + ")"
		}
		return ""
	}
	t := bytes.TrimSpace(data)
	if bytes.HasPrefix(t, []byte("-----BEGIN PGP MESSAGE-----")) && bytes.HasSuffix(t, []byte("-----END PGP MESSAGE-----")) {
		return "PGP message (" + ct + ")"
	}
	return ""
}

// pkcs7Signed reports whether DER bytes (or their base64 when a part was
// not transfer-decoded) are a CMS ContentInfo of signed data: its object
// identifier 1.2.840.113549.1.7.2, near the start.
func pkcs7Signed(b []byte) bool {
	oid := []byte{0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02}
	return bytes.Contains(b[:min(len(b), 32)], oid)
}

// unflow joins a format=flowed body's lines (RFC 3676): a line ending
// in a space goes on in the next line of the same quote depth (its space
// dropped too with delsp=yes), a space-stuffed line loses its first space,
// and the signature separator "-- " stays a line of its own. Quoted
// paragraphs come out with one "> " per level.
func unflow(t string, delsp bool) string {
	var out []string
	var para strings.Builder
	depth, open := 0, false
	end := func() {
		if open {
			out = append(out, strings.Repeat("> ", depth)+para.String())
			para.Reset()
			open = false
		}
	}
	for _, l := range strings.Split(t, "\n") {
		l = strings.TrimSuffix(l, "\r")
		q := 0
		for q < len(l) && l[q] == '>' {
			q++
		}
		l = strings.TrimPrefix(l[q:], " ") // space-stuffing
		if open && q != depth {
			end() // a flowed line before another depth is fixed
		}
		depth = q
		flowed := strings.HasSuffix(l, " ") && l != "-- "
		if flowed && delsp {
			l = l[:len(l)-1]
		}
		para.WriteString(l)
		open = true
		if !flowed {
			end()
		}
	}
	end()
	return strings.Join(out, "\n")
}

// uuFile is a file uuencoded in a plain-text body.
type uuFile struct {
	name string
	data []byte
}

// splitUU takes the uuencoded files out of a plain-text body, as mailers
// and news gateways before MIME attached them: a line "begin MODE NAME",
// lines of uuencoded data, a line "end". It returns the text without them
// and the files, at most max bytes of decoded data in all (a file past it
// stays in the text). A "begin" without its "end" stays text.
func splitUU(t string, max int64) (string, []uuFile) {
	if !strings.Contains(t, "begin ") {
		return t, nil
	}
	ls := strings.Split(t, "\n")
	var keep []string
	var files []uuFile
	var total int64
	for i := 0; i < len(ls); i++ {
		name, ok := uuBegin(ls[i])
		if !ok {
			keep = append(keep, ls[i])
			continue
		}
		var data []byte
		j, good := i+1, false
		for ; j < len(ls); j++ {
			l := strings.TrimRight(ls[j], "\r ")
			if l == "end" {
				good = true
				break
			}
			d, ok := uuLine(l)
			if !ok {
				break
			}
			data = append(data, d...)
		}
		if !good || total+int64(len(data)) > max {
			keep = append(keep, ls[i])
			continue
		}
		total += int64(len(data))
		files = append(files, uuFile{name: name, data: data})
		i = j
	}
	return strings.Join(keep, "\n"), files
}

// uuBegin reads a "begin 644 name" line: three or four octal digits of
// mode, then the file's name.
func uuBegin(l string) (string, bool) {
	l = strings.TrimRight(l, "\r")
	rest, ok := strings.CutPrefix(l, "begin ")
	if !ok {
		return "", false
	}
	mode, name, ok := strings.Cut(rest, " ")
	if !ok || len(mode) < 3 || len(mode) > 4 || strings.Trim(mode, "01234567") != "" {
		return "", false
	}
	name = path.Base(strings.ReplaceAll(strings.TrimSpace(name), `\`, "/"))
	if name == "" || name == "." || name == "/" {
		return "", false
	}
	return name, true
}

// uuLine decodes one line of uuencoded data: its first character is the
// count of bytes, then four characters for every three ("`" is zero).
// Trailing padding may be missing (spaces trimmed by a mailer).
func uuLine(l string) ([]byte, bool) {
	if l == "" {
		return nil, false
	}
	n := int(l[0]-' ') & 63
	if l[0] < ' ' || l[0] > '`' {
		return nil, false
	}
	if n == 0 {
		return nil, true
	}
	enc := l[1:]
	if need := (n + 2) / 3 * 4; len(enc) < need {
		enc += strings.Repeat("`", need-len(enc))
	}
	out := make([]byte, 0, n+2)
	for i := 0; i+4 <= len(enc) && len(out) < n; i += 4 {
		var v [4]byte
		for k := range 4 {
			c := enc[i+k]
			if c < ' ' || c > '`' {
				return nil, false
			}
			v[k] = (c - ' ') & 63
		}
		out = append(out, v[0]<<2|v[1]>>4, v[1]<<4|v[2]>>2, v[2]<<6|v[3])
	}
	if len(out) < n {
		return nil, false
	}
	return out[:n], true
}

// extFor is a file extension for a part without a name.
func extFor(ct string) string {
	// Our own table, not mime.ExtensionsByType: that reads the system's
	// mime.types, absent in the sandbox.
	switch ct {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "text/plain":
		return ".txt"
	case "text/html":
		return ".html"
	case "text/calendar":
		return ".ics"
	case "application/pdf":
		return ".pdf"
	}
	return ".bin"
}

// transferDecode undoes a Content-Transfer-Encoding, reading at most max
// bytes of the result. Damaged base64 keeps what decoded before the damage.
func transferDecode(cte string, body io.Reader, max int64) ([]byte, error) {
	var r io.Reader
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &base64Clean{r: body})
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	default: // 7bit, 8bit, binary, or none
		r = body
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(b)) > max {
		return b[:max], fmt.Errorf("%w: a part of more than %d bytes", ErrLimit, max)
	}
	if err != nil {
		return b, fmt.Errorf("%s data damaged: %w", cte, err)
	}
	return b, nil
}

// base64Clean drops what base64 has no place for (spaces, stray
// characters some mailers add), so a body decodes as far as it goes.
type base64Clean struct{ r io.Reader }

func (c *base64Clean) Read(p []byte) (int, error) {
	for {
		n, err := c.r.Read(p)
		k := 0
		for _, b := range p[:n] {
			if b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '+' || b == '/' || b == '=' {
				p[k] = b
				k++
			}
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
}

// htmlToText renders an HTML body as text, as the HTML extractor reads a
// page.
func htmlToText(src string, lim Limits) string {
	doc, err := parseHTML(src)
	if err != nil {
		return src
	}
	tmp := newSink(context.Background(), lim)
	h := &htmlRenderer{s: tmp, lim: lim, outline: outline{max: 10_000}}
	h.walk(doc)
	h.flush()
	out := make([]string, 0, len(tmp.objs))
	for _, o := range tmp.objs {
		out = append(out, o.Data)
	}
	return strings.Join(out, "\n\n")
}

// extractEML reads an RFC 5322 message.
func extractEML(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	m, err := readMail(b, in.lim)
	if err != nil {
		return err
	}
	if len(m.encrypted) > 0 {
		if strings.TrimSpace(m.body) == "" {
			// Only the headers are in clear: an index of them alone would
			// pass for a mail with an empty body.
			return fmt.Errorf("%w: its body is encrypted to its recipients (%s); only the headers are in clear (From: %s, Subject: %s)",
				ErrEncryptedMail, strings.Join(m.encrypted, ", "), m.from, m.subject)
		}
		m.stops = append(m.stops, "encrypted parts not read: "+strings.Join(m.encrypted, ", "))
	}
	if cut {
		m.stops = append(m.stops, fmt.Sprintf("the message is larger than %d bytes: the rest is not read", in.lim.MaxPartBytes))
	}
	emitMail(s, m, in.lim)
	return nil
}

// emitMail adds a message's objects (its headers, its body by lines) and
// structure.
func emitMail(s *sink, m *mailMsg, lim Limits) {
	var head []string
	for _, h := range [][2]string{{"From", m.from}, {"To", m.to}, {"Cc", m.cc}, {"Date", m.date}, {"Subject", m.subject}} {
		if h[1] != "" {
			head = append(head, h[0]+": "+h[1])
			s.structure[strings.ToLower(h[0])] = h[1]
		}
	}
	if m.messageID != "" {
		s.structure["messageId"] = m.messageID
	}
	if len(head) > 0 {
		s.add(content.Object{ContentType: content.Text, Data: strings.Join(head, "\n"), Ref: content.Ref{Location: "headers", Label: m.subject, Part: "headers"}})
	}
	if m.body != "" {
		emitLineBlocks(s, lines(m.body), 1, lim.BlockBytes, content.Ref{Part: "body", Label: m.subject}, nil)
	}
	s.structure["body"] = m.bodyType
	s.structure["parts"] = m.parts
	if len(m.atts) > 0 {
		// The host hands the files to the attachments tool and indexes
		// each as a container entry.
		list := make([]map[string]any, len(m.atts))
		for i, a := range m.atts {
			list[i] = map[string]any{"name": a.name, "size": len(a.data), "mimeType": a.mimeType}
		}
		s.structure["attachments"] = list
	}
	if len(m.encrypted) > 0 {
		s.structure["encryptedParts"] = m.encrypted
	}
	if len(m.stops) > 0 {
		s.structure["stops"] = m.stops
		if s.truncated == "" {
			s.truncated = strings.Join(m.stops, "; ")
		}
	}
}

// extractMHTML reads a web archive (.mht, .mhtml: RFC 2557): a MIME
// message whose root is the page's HTML, the pictures and frames beside it
// by Content-Location. The page is read as an HTML file is, with its
// headings as sections; the subject (the page's title) and the location
// it was saved from are structure. Its pictures are the page's own, not
// attachments.
func extractMHTML(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	msg, err := mail.ReadMessage(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		return fmt.Errorf("%w: not an MHTML web archive: %w", ErrMalformed, err)
	}
	m := &mailMsg{}
	w := &mimeWalk{m: m, lim: in.lim}
	w.part(textproto.MIMEHeader(msg.Header), msg.Body, 0)
	if len(w.html) == 0 && len(w.plain) == 0 {
		return fmt.Errorf("%w: an MHTML web archive without an HTML or text part", ErrMalformed)
	}
	if t := decodeHeader(msg.Header.Get("Subject")); t != "" {
		s.structure["title"] = t
	}
	if loc := strings.TrimSpace(msg.Header.Get("Snapshot-Content-Location")); loc != "" {
		s.structure["location"] = loc
	}
	// One renderer for every HTML part (a page and its frames), so the
	// sections are numbered through.
	r := &htmlRenderer{s: s, lim: in.lim, outline: outline{max: 10_000}}
	for _, h := range w.html {
		doc, err := parseHTML(h)
		if err != nil {
			return fmt.Errorf("%w: its HTML: %w", ErrMalformed, err)
		}
		if t := findTitle(doc); t != "" && s.structure["title"] == nil {
			s.structure["title"] = t
		}
		r.walk(doc)
		r.flush()
	}
	if len(r.outline.sections) > 0 {
		s.structure["sections"] = r.outline.sections
	}
	if len(w.html) == 0 {
		emitLineBlocks(s, lines(strings.Join(w.plain, "\n\n")), 1, in.lim.BlockBytes, content.Ref{}, nil)
	}
	s.structure["parts"] = w.parts
	if cut {
		m.stops = append(m.stops, fmt.Sprintf("the archive is larger than %d bytes: the rest is not read", in.lim.MaxPartBytes))
	}
	if len(m.stops) > 0 {
		s.structure["stops"] = m.stops
		if s.truncated == "" {
			s.truncated = strings.Join(m.stops, "; ")
		}
	}
	return nil
}

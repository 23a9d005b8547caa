package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"mime"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connector"
	"github.com/agenthost/agenthost/plugins/textenc"
)

// gmail is the service "gmail". Browse "" lists the labels, "<label id>"
// a label's messages, "<label id>/<message id>" one message; download
// gives a message as .eml; search takes Gmail's search syntax; sendMail
// and listMail send and read mail ("" is the inbox, else a label's id or
// name).
type gmail struct{}

const (
	// mailPage bounds a page of messages: each costs a messages.get.
	mailPage = 50
	// maxBody bounds a listed message's text.
	maxBody = 256 << 10
	// maxSend bounds a message to send (Gmail takes 25 MB messages).
	maxSend = 20 << 20
)

type label struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

type messageRef struct {
	ID string `json:"id"`
}

type messageList struct {
	Messages      []messageRef `json:"messages"`
	NextPageToken string       `json:"nextPageToken"`
}

type header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type messagePart struct {
	MIMEType string   `json:"mimeType"`
	Filename string   `json:"filename"`
	Headers  []header `json:"headers"`
	Body     struct {
		Size int    `json:"size"`
		Data string `json:"data"`
	} `json:"body"`
	Parts []messagePart `json:"parts"`
}

type message struct {
	ID           string      `json:"id"`
	LabelIDs     []string    `json:"labelIds"`
	Snippet      string      `json:"snippet"`
	InternalDate string      `json:"internalDate"`
	Payload      messagePart `json:"payload"`
	Raw          string      `json:"raw"`
}

func (m message) header(name string) string {
	for _, h := range m.Payload.Headers {
		if strings.EqualFold(h.Name, name) {
			if d, err := new(mime.WordDecoder).DecodeHeader(h.Value); err == nil {
				return d
			}
			return h.Value
		}
	}
	return ""
}

func (m message) date() time.Time {
	ms, err := strconv.ParseInt(m.InternalDate, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// b64 decodes Gmail's base64url, padded or not.
func b64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func (c *client) labels() ([]label, error) {
	var out struct {
		Labels []label `json:"labels"`
	}
	if err := c.getJSON(c.gmail, "/gmail/v1/users/me/labels", nil, &out); err != nil {
		return nil, err
	}
	for _, l := range out.Labels {
		if !idPattern.MatchString(l.ID) {
			return nil, pdk.Errorf("bad_response", "Google answered a label without a valid id")
		}
	}
	return out.Labels, nil
}

// labelID reads a folder: "" is the inbox, a system id is itself, else a
// label is found by id or name.
func (c *client) labelID(folder string) (string, error) {
	f := strings.Trim(folder, "/")
	if f == "" || strings.EqualFold(f, "inbox") {
		return "INBOX", nil
	}
	ls, err := c.labels()
	if err != nil {
		return "", err
	}
	for _, l := range ls {
		if l.ID == f || strings.EqualFold(l.Name, f) {
			return l.ID, nil
		}
	}
	return "", pdk.Errorf("not_found", "no label %q", folder)
}

// messages lists one page of message ids (by label or query) and gets
// each in format (metadata or full).
func (c *client) messages(labelID, query, cursor string, limit int, format string) ([]message, string, error) {
	if err := checkCursor(cursor); err != nil {
		return nil, "", err
	}
	n := pageSize(limit, 20, mailPage)
	q := url.Values{"maxResults": {strconv.Itoa(n)}}
	if labelID != "" {
		q.Set("labelIds", labelID)
	}
	if query != "" {
		q.Set("q", query)
	}
	if cursor != "" {
		q.Set("pageToken", cursor)
	}
	var l messageList
	if err := c.getJSON(c.gmail, "/gmail/v1/users/me/messages", q, &l); err != nil {
		return nil, "", err
	}
	if len(l.Messages) > n {
		l.Messages = l.Messages[:n]
	}
	out := make([]message, 0, len(l.Messages))
	for _, ref := range l.Messages {
		m, err := c.message(ref.ID, format)
		if err != nil {
			return nil, "", err
		}
		out = append(out, m)
	}
	return out, l.NextPageToken, nil
}

func (c *client) message(id, format string) (message, error) {
	if !idPattern.MatchString(id) {
		return message{}, pdk.Errorf("bad_response", "Google answered a message without a valid id")
	}
	q := url.Values{"format": {format}}
	if format == "metadata" {
		q["metadataHeaders"] = []string{"From", "To", "Cc", "Subject", "Date"}
	}
	var m message
	if err := c.getJSON(c.gmail, "/gmail/v1/users/me/messages/"+id, q, &m); err != nil {
		return message{}, err
	}
	if m.ID != id {
		return message{}, pdk.Errorf("bad_response", "Google answered message %q with another one", id)
	}
	return m, nil
}

func (m message) entry(path string) connector.Entry {
	subject := m.header("Subject")
	if subject == "" {
		subject = "(no subject)"
	}
	sum := m.header("From")
	if m.Snippet != "" { // Gmail's snippet is HTML-escaped
		sum += ": " + html.UnescapeString(m.Snippet)
	}
	return connector.Entry{ID: m.ID, Name: subject, Path: path, MIMEType: "message/rfc822", Modified: m.date(), Summary: sum}
}

// mailPath reads "<label>", "<label>/<message>" (ids only).
func mailPath(p string) (string, string, error) {
	l, m, _ := strings.Cut(strings.Trim(p, "/"), "/")
	if !idPattern.MatchString(l) || (m != "" && !idPattern.MatchString(m)) {
		return "", "", pdk.Errorf("invalid_path", "%q is not <label id> or <label id>/<message id>", p)
	}
	return l, m, nil
}

func (gmail) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}}
	if strings.Trim(r.Path, "/") == "" {
		ls, err := c.labels()
		if err != nil {
			return connector.Listing{}, err
		}
		for _, l := range ls {
			out.Entries = append(out.Entries, connector.Entry{ID: l.ID, Name: l.Name, Path: l.ID, Folder: true, Summary: l.Type + " label"})
		}
		return out, nil
	}
	lid, mid, err := mailPath(r.Path)
	if err != nil {
		return connector.Listing{}, err
	}
	if mid != "" {
		m, err := c.message(mid, "metadata")
		if err != nil {
			return connector.Listing{}, err
		}
		out.Entries = append(out.Entries, m.entry(lid+"/"+m.ID))
		return out, nil
	}
	msgs, next, err := c.messages(lid, "", r.Cursor, r.Limit, "metadata")
	if err != nil {
		return connector.Listing{}, err
	}
	for _, m := range msgs {
		out.Entries = append(out.Entries, m.entry(lid+"/"+m.ID))
	}
	out.Next = next
	return out, nil
}

var unsafeName = regexp.MustCompile(`[^\p{L}\p{N} ._()-]+`)

func (gmail) Download(r connector.DownloadRequest) (connector.File, error) {
	id := r.ID
	if id == "" {
		_, mid, err := mailPath(r.Path)
		if err != nil {
			return connector.File{}, err
		}
		id = mid
	}
	if !idPattern.MatchString(id) {
		return connector.File{}, pdk.Errorf("invalid_path", "download <label id>/<message id> from browsing a label")
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.File{}, err
	}
	m, err := c.message(id, "raw")
	if err != nil {
		return connector.File{}, err
	}
	raw, err := b64(m.Raw)
	if err != nil {
		return connector.File{}, pdk.Errorf("bad_response", "Google answered message %s with a raw form that is not base64url", id)
	}
	if r.MaxBytes > 0 && int64(len(raw)) > r.MaxBytes {
		return connector.File{}, pdk.Errorf("too_large", "message %s is %d bytes, over the limit of %d", id, len(raw), r.MaxBytes)
	}
	name := "message-" + id
	if msg, err := mail.ReadMessage(bytes.NewReader(raw)); err == nil {
		if s, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err == nil && strings.TrimSpace(s) != "" {
			name = strings.TrimSpace(unsafeName.ReplaceAllString(s, "_"))
			if len(name) > 100 {
				name = name[:100]
			}
		}
	}
	return connector.File{Name: name + ".eml", MIMEType: "message/rfc822", Data: raw}, nil
}

func (gmail) Upload(connector.UploadRequest) (connector.Entry, error) {
	return connector.Entry{}, connector.ErrUnsupported("gmail", "upload (send mail with sendMail)")
}

func (gmail) Search(r connector.SearchRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	msgs, next, err := c.messages("", r.Query, r.Cursor, r.Limit, "metadata")
	if err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}, Next: next}
	for _, m := range msgs {
		lid := "ALL"
		if len(m.LabelIDs) > 0 && idPattern.MatchString(m.LabelIDs[0]) {
			lid = m.LabelIDs[0]
		}
		out.Entries = append(out.Entries, m.entry(lid+"/"+m.ID))
	}
	return out, nil
}

// addresses checks a recipient list: each an RFC 5322 address, no header
// injection.
func addresses(field string, in []string) (string, error) {
	out := make([]string, 0, len(in))
	for _, a := range in {
		if strings.ContainsAny(a, "\r\n") {
			return "", pdk.Errorf("invalid_mail", "%s address contains a line break", field)
		}
		addr, err := mail.ParseAddress(a)
		if err != nil {
			return "", pdk.Errorf("invalid_mail", "%s address %q: %v", field, a, err)
		}
		out = append(out, addr.String())
	}
	return strings.Join(out, ", "), nil
}

// rfc2822 builds the message Gmail sends: UTF-8 text, base64 body, the
// subject RFC 2047-encoded when it needs to be. Gmail sets From and Date.
func rfc2822(m connector.Mail) ([]byte, error) {
	if len(m.To) == 0 {
		return nil, pdk.Errorf("invalid_mail", "a message needs a recipient")
	}
	if len(m.To)+len(m.Cc) > 100 {
		return nil, pdk.Errorf("invalid_mail", "at most 100 recipients")
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, pdk.Errorf("invalid_mail", "the subject contains a line break")
	}
	if len(m.Body) > maxSend {
		return nil, pdk.Errorf("too_large", "the message body is over %d bytes", maxSend)
	}
	to, err := addresses("To", m.To)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("To: " + to + "\r\n")
	if len(m.Cc) > 0 {
		cc, err := addresses("Cc", m.Cc)
		if err != nil {
			return nil, err
		}
		b.WriteString("Cc: " + cc + "\r\n")
	}
	b.WriteString("Subject: " + mime.QEncoding.Encode("utf-8", m.Subject) + "\r\n")
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=\"UTF-8\"\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	enc := base64.StdEncoding.EncodeToString([]byte(m.Body))
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\r\n")
	return b.Bytes(), nil
}

func (gmail) SendMail(r connector.SendMailRequest) (connector.Mail, error) {
	raw, err := rfc2822(r.Mail)
	if err != nil {
		return connector.Mail{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Mail{}, err
	}
	body, _ := json.Marshal(map[string]string{"raw": base64.URLEncoding.EncodeToString(raw)})
	resp, err := c.send("POST", c.gmail+"/gmail/v1/users/me/messages/send", body, map[string]string{"Content-Type": "application/json"})
	if err != nil {
		return connector.Mail{}, err
	}
	var sent message
	if err := decode(resp, "messages.send", &sent); err != nil {
		return connector.Mail{}, err
	}
	if !idPattern.MatchString(sent.ID) {
		return connector.Mail{}, pdk.Errorf("bad_response", "Google answered the sent message without a valid id")
	}
	out := r.Mail
	out.ID = sent.ID
	return out, nil
}

func (gmail) ListMail(r connector.ListMailRequest) (connector.MailList, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.MailList{}, err
	}
	lid, err := c.labelID(r.Folder)
	if err != nil {
		return connector.MailList{}, err
	}
	msgs, next, err := c.messages(lid, "", r.Cursor, r.Limit, "full")
	if err != nil {
		return connector.MailList{}, err
	}
	out := connector.MailList{Messages: []connector.Mail{}, Next: next}
	for _, m := range msgs {
		out.Messages = append(out.Messages, connector.Mail{ID: m.ID, From: m.header("From"), To: split(m.header("To")), Cc: split(m.header("Cc")),
			Subject: m.header("Subject"), Body: text(m.Payload), Date: m.date()})
	}
	return out, nil
}

func split(list string) []string {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	if as, err := mail.ParseAddressList(list); err == nil {
		out := make([]string, len(as))
		for i, a := range as {
			out[i] = a.Address
		}
		return out
	}
	return []string{list}
}

var tags = regexp.MustCompile(`<[^>]*>`)

// decode reads a part's body as UTF-8. Gmail's body.data is the part's
// bytes with the transfer encoding undone but in the part's own charset
// (Gmail API, users.messages: MessagePartBody.data is "the body data of a
// MIME message part as a base64url encoded string"), which only its
// Content-Type header names; textenc trusts that label unless the bytes
// contradict it, and guesses when there is none.
func (p messagePart) decode(b []byte) string {
	charset := ""
	for _, h := range p.Headers {
		if strings.EqualFold(h.Name, "Content-Type") {
			if _, params, err := mime.ParseMediaType(h.Value); err == nil {
				charset = params["charset"]
			}
		}
	}
	s, _ := textenc.Decode(b, charset)
	return s
}

// text is a message's text: its first text/plain part, else its first
// text/html part without tags; bounded.
func text(p messagePart) string {
	find := func(want string) string {
		var walk func(messagePart, int) string
		walk = func(p messagePart, depth int) string {
			if depth > 16 {
				return ""
			}
			if p.MIMEType == want && p.Filename == "" && p.Body.Data != "" {
				if b, err := b64(p.Body.Data); err == nil {
					return p.decode(b)
				}
			}
			for _, c := range p.Parts {
				if s := walk(c, depth+1); s != "" {
					return s
				}
			}
			return ""
		}
		return walk(p, 0)
	}
	s := find("text/plain")
	if s == "" {
		s = tags.ReplaceAllString(find("text/html"), " ")
	}
	if len(s) > maxBody {
		s = s[:maxBody]
	}
	return strings.TrimSpace(s)
}

package google

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Message is a Gmail message: its RFC 2822 bytes and labels.
type Message struct {
	ID, ThreadID string
	LabelIDs     []string
	Raw          []byte
	InternalDate time.Time
}

// Label is a Gmail label.
type Label struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// Header returns a header of the message ("" if none or unparsable).
func (m Message) Header(name string) string {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return ""
	}
	v := msg.Header.Get(name)
	if d, err := new(mime.WordDecoder).DecodeHeader(v); err == nil {
		return d
	}
	return v
}

// AddMessage stores a received message (RFC 2822) with labels (INBOX if
// none) and returns its id.
func (s *Server) AddMessage(raw []byte, labels ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(labels) == 0 {
		labels = []string{"INBOX", "UNREAD"}
	}
	return s.addMessage(raw, labels, time.Time{})
}

func (s *Server) addMessage(raw []byte, labels []string, at time.Time) string {
	s.seq++
	id := fmt.Sprintf("18f%013x", s.seq)
	if at.IsZero() {
		at = epoch.Add(time.Duration(s.seq) * time.Minute)
	}
	s.msgs = append(s.msgs, &Message{ID: id, ThreadID: id, LabelIDs: slices.Clone(labels), Raw: raw, InternalDate: at})
	return id
}

// AddLabel adds a user label.
func (s *Server) AddLabel(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.labels = append(s.labels, Label{ID: id, Name: name, Type: "user"})
}

// Sent returns the messages sent through the API.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// user checks the userId path parameter: "me" or the mailbox's address.
func (s *Server) user(w http.ResponseWriter, r *http.Request) bool {
	u := r.PathValue("user")
	if u == "me" || strings.EqualFold(u, s.Account) {
		return true
	}
	googleError(w, http.StatusForbidden, "global", "forbidden", "Delegation denied for "+s.Account, "PERMISSION_DENIED")
	return false
}

func (s *Server) profile(w http.ResponseWriter, r *http.Request) {
	if !s.user(w, r) {
		return
	}
	s.mu.Lock()
	n := len(s.msgs)
	s.mu.Unlock()
	writeJSON(w, map[string]any{"emailAddress": s.Account, "messagesTotal": n, "threadsTotal": n, "historyId": strconv.Itoa(1000 + n)})
}

func (s *Server) listLabels(w http.ResponseWriter, r *http.Request) {
	if !s.user(w, r) {
		return
	}
	s.mu.Lock()
	labels := slices.Clone(s.labels)
	s.mu.Unlock()
	writeJSON(w, map[string]any{"labels": labels})
}

// matchMail is the subset of Gmail's search operators the fake knows:
// from:, to:, subject:, in:/label:, is:unread|starred, and words or
// "phrases" anywhere in the headers or the text.
func matchMail(m *Message, q string) bool {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return false
	}
	body, _ := io.ReadAll(msg.Body)
	hdr := func(k string) string { return strings.ToLower(msg.Header.Get(k)) }
	all := strings.ToLower(hdr("From") + " " + hdr("To") + " " + hdr("Subject") + " " + string(body))
	for _, term := range splitTerms(q) {
		k, v, ok := strings.Cut(term, ":")
		v = strings.ToLower(strings.Trim(v, `"`))
		switch {
		case ok && k == "from":
			if !strings.Contains(hdr("From"), v) {
				return false
			}
		case ok && k == "to":
			if !strings.Contains(hdr("To")+hdr("Cc"), v) {
				return false
			}
		case ok && k == "subject":
			if !strings.Contains(hdr("Subject"), v) {
				return false
			}
		case ok && (k == "in" || k == "label"):
			if !slices.ContainsFunc(m.LabelIDs, func(l string) bool { return strings.EqualFold(l, v) }) {
				return false
			}
		case ok && k == "is":
			if !slices.Contains(m.LabelIDs, strings.ToUpper(v)) {
				return false
			}
		default:
			if !strings.Contains(all, strings.ToLower(strings.Trim(term, `"`))) {
				return false
			}
		}
	}
	return true
}

func splitTerms(q string) []string {
	var out []string
	var b strings.Builder
	quoted := false
	for _, r := range q {
		switch {
		case r == '"':
			quoted = !quoted
			b.WriteRune(r)
		case r == ' ' && !quoted:
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		default:
			b.WriteRune(r)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	if !s.user(w, r) {
		return
	}
	q := r.URL.Query()
	max := 100
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			invalid(w, "maxResults", fmt.Sprintf("Invalid value '%s'. Values must be within the range: [1, 500]", v))
			return
		}
		max = n
	}
	offset := 0
	key := q.Get("q") + "|" + strings.Join(q["labelIds"], ",")
	if tok := q.Get("pageToken"); tok != "" {
		var err error
		if offset, err = readPageToken(tok, key); err != nil {
			invalid(w, "pageToken", "Invalid pageToken")
			return
		}
	}
	spamTrash := q.Get("includeSpamTrash") == "true"
	s.mu.Lock()
	var hits []*Message
	for _, m := range s.msgs {
		if !spamTrash && (slices.Contains(m.LabelIDs, "SPAM") || slices.Contains(m.LabelIDs, "TRASH")) {
			continue
		}
		ok := true
		for _, l := range q["labelIds"] {
			if !slices.Contains(m.LabelIDs, l) {
				ok = false
			}
		}
		if ok && q.Get("q") != "" {
			ok = matchMail(m, q.Get("q"))
		}
		if ok {
			hits = append(hits, m)
		}
	}
	s.mu.Unlock()
	// Newest first.
	slices.SortStableFunc(hits, func(a, b *Message) int { return b.InternalDate.Compare(a.InternalDate) })
	out := map[string]any{"resultSizeEstimate": len(hits)}
	var page []map[string]string
	for i := offset; i < len(hits) && i < offset+max; i++ {
		page = append(page, map[string]string{"id": hits[i].ID, "threadId": hits[i].ThreadID})
	}
	if len(page) > 0 { // Gmail leaves "messages" out of an empty answer
		out["messages"] = page
	}
	if offset+max < len(hits) {
		out["nextPageToken"] = pageToken(offset+max, key)
	}
	writeJSON(w, out)
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) {
	if !s.user(w, r) {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	var m *Message
	for _, x := range s.msgs {
		if x.ID == id {
			cp := *x
			m = &cp
		}
	}
	s.mu.Unlock()
	if m == nil {
		googleError(w, http.StatusNotFound, "global", "notFound", "Requested entity was not found.", "NOT_FOUND")
		return
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "full"
	}
	out := map[string]any{"id": m.ID, "threadId": m.ThreadID, "labelIds": m.LabelIDs, "historyId": "1001",
		"internalDate": strconv.FormatInt(m.InternalDate.UnixMilli(), 10), "sizeEstimate": len(m.Raw)}
	switch format {
	case "minimal":
	case "raw":
		out["raw"] = base64.URLEncoding.EncodeToString(m.Raw)
		out["snippet"] = snippet(m.Raw)
	case "full", "metadata":
		p, err := payload(m.Raw, "", format == "metadata", r.URL.Query()["metadataHeaders"])
		if err != nil {
			googleError(w, http.StatusInternalServerError, "global", "backendError", "Backend Error", "INTERNAL")
			return
		}
		out["payload"] = p
		out["snippet"] = snippet(m.Raw)
	default:
		invalid(w, "format", "Invalid value at 'format'")
		return
	}
	writeJSON(w, out)
}

// part is a MessagePart of the full format.
type part struct {
	PartID   string              `json:"partId"`
	MIMEType string              `json:"mimeType"`
	Filename string              `json:"filename"`
	Headers  []map[string]string `json:"headers"`
	Body     map[string]any      `json:"body"`
	Parts    []part              `json:"parts,omitempty"`
}

// payload parses an RFC 2822 entity into Gmail's MessagePart tree: the
// bodies decoded from their transfer encoding, then base64url.
func payload(raw []byte, id string, headersOnly bool, only []string) (part, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return part{}, err
	}
	return entity(textprotoHeader(msg.Header), msg.Body, id, headersOnly, only)
}

type header = map[string][]string

func textprotoHeader(h mail.Header) header { return header(h) }

func entity(h header, body io.Reader, id string, headersOnly bool, only []string) (part, error) {
	get := func(k string) string {
		if v := h[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	ct := get("Content-Type")
	if ct == "" {
		ct = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		mt = "text/plain"
	}
	p := part{PartID: id, MIMEType: mt, Body: map[string]any{"size": 0}}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if len(only) > 0 && !slices.ContainsFunc(only, func(o string) bool { return strings.EqualFold(o, k) }) {
			continue
		}
		for _, v := range h[k] {
			p.Headers = append(p.Headers, map[string]string{"name": k, "value": v})
		}
	}
	if headersOnly {
		return p, nil
	}
	if _, dp, err := mime.ParseMediaType(get("Content-Disposition")); err == nil {
		p.Filename = dp["filename"]
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for i := 0; ; i++ {
			sub, err := mr.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return part{}, err
			}
			subID := strconv.Itoa(i)
			if id != "" {
				subID = id + "." + subID
			}
			sp, err := entity(header(sub.Header), sub, subID, false, nil)
			if err != nil {
				return part{}, err
			}
			p.Parts = append(p.Parts, sp)
		}
		return p, nil
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return part{}, err
	}
	switch strings.ToLower(get("Content-Transfer-Encoding")) {
	case "base64":
		data, err = io.ReadAll(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r"), nil), []byte("\n"), nil))))
	case "quoted-printable":
		data, err = io.ReadAll(quotedprintable.NewReader(bytes.NewReader(data)))
	}
	if err != nil {
		return part{}, err
	}
	p.Body = map[string]any{"size": len(data), "data": base64.URLEncoding.EncodeToString(data)}
	return p, nil
}

func snippet(raw []byte) string {
	p, err := payload(raw, "", false, nil)
	if err != nil {
		return ""
	}
	var text string
	var walk func(part)
	walk = func(p part) {
		if text != "" {
			return
		}
		if p.MIMEType == "text/plain" {
			if d, ok := p.Body["data"].(string); ok {
				b, _ := base64.URLEncoding.DecodeString(d)
				text = string(b)
			}
		}
		for _, c := range p.Parts {
			walk(c)
		}
	}
	walk(p)
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 200 {
		text = text[:200]
	}
	return html.EscapeString(text)
}

// sendMessage is users.messages.send: {"raw": base64url RFC 2822}. Gmail
// needs a recipient, sets From to the account, and files it under SENT.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) {
	if !s.user(w, r) {
		return
	}
	var in struct {
		Raw      string `json:"raw"`
		ThreadID string `json:"threadId"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		googleError(w, http.StatusBadRequest, "global", "parseError", "Invalid JSON payload received.", "INVALID_ARGUMENT")
		return
	}
	if in.Raw == "" {
		googleError(w, http.StatusBadRequest, "global", "invalidArgument", "'raw' RFC822 payload message string or uploading message via /upload/* URL required", "INVALID_ARGUMENT")
		return
	}
	raw, err := base64.URLEncoding.DecodeString(in.Raw)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(in.Raw); err != nil {
			googleError(w, http.StatusBadRequest, "global", "invalidArgument", "Invalid value for ByteString: "+truncate(in.Raw, 20), "INVALID_ARGUMENT")
			return
		}
	}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		googleError(w, http.StatusBadRequest, "global", "invalidArgument", "Invalid RFC 822 message", "INVALID_ARGUMENT")
		return
	}
	var rcpt int
	for _, k := range []string{"To", "Cc", "Bcc"} {
		if v := msg.Header.Get(k); v != "" {
			list, err := mail.ParseAddressList(v)
			if err != nil {
				googleError(w, http.StatusBadRequest, "global", "invalidArgument", "Invalid "+k+" header", "INVALID_ARGUMENT")
				return
			}
			rcpt += len(list)
		}
	}
	if rcpt == 0 {
		googleError(w, http.StatusBadRequest, "global", "invalidArgument", "Recipient address required", "INVALID_ARGUMENT")
		return
	}
	if msg.Header.Get("From") == "" {
		raw = append([]byte("From: "+s.Account+"\r\n"), raw...)
	}
	s.mu.Lock()
	id := s.addMessage(raw, []string{"SENT"}, time.Now().UTC())
	m := *s.msgs[len(s.msgs)-1]
	s.sent = append(s.sent, m)
	s.mu.Unlock()
	writeJSON(w, map[string]any{"id": id, "threadId": m.ThreadID, "labelIds": []string{"SENT"}})
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

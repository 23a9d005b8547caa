package extract

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// maxMboxMessages bounds the messages of one mailbox, as the archives'
// entry limit bounds an archive's files.
const maxMboxMessages = 10_000

// splitMbox cuts a mailbox into its messages: each begins with a line
// "From " at the start of the file or after a line break (mboxo, mboxrd,
// mboxcl alike) that a header field follows; ">From " quoting in bodies is
// undone. A body line "From Monday on..." that an mboxo writer did not
// quote is followed by more body, not by a header, and stays in its
// message. more says the mailbox held more than max messages.
func splitMbox(b []byte, max int) (msgs [][]byte, more bool) {
	if !bytes.HasPrefix(b, []byte("From ")) {
		return nil, false
	}
	start := 0
	for start < len(b) {
		next := nextFromLine(b, start+1)
		if len(msgs) == max {
			return msgs, true
		}
		msgs = append(msgs, unquoteFrom(b[start:next]))
		start = next
	}
	return msgs, false
}

// nextFromLine is the offset of the first "From " line at or after from
// that starts a message (a header field on the line after it), len(b) for
// none.
func nextFromLine(b []byte, from int) int {
	sep := []byte("\nFrom ")
	for from < len(b) {
		i := bytes.Index(b[from:], sep)
		if i < 0 {
			return len(b)
		}
		at := from + i + 1
		if rest := b[at:]; bytes.IndexByte(rest, '\n') >= 0 && isHeaderLine(rest[bytes.IndexByte(rest, '\n')+1:]) {
			return at
		}
		from = at
	}
	return len(b)
}

// isHeaderLine reports whether b starts with an RFC 5322 header field: a
// name of printable characters but the colon, then a colon.
func isHeaderLine(b []byte) bool {
	for i, c := range b {
		switch {
		case c == ':':
			return i > 0
		case c <= ' ' || c > '~':
			return false
		}
	}
	return false
}

// unquoteFrom undoes mboxrd quoting: a body line ">From " (with any number
// of '>') loses one '>'.
func unquoteFrom(m []byte) []byte {
	if !bytes.Contains(m, []byte("\n>")) {
		return m
	}
	ls := bytes.Split(m, []byte("\n"))
	for i, l := range ls {
		t := bytes.TrimLeft(l, ">")
		if len(t) < len(l) && bytes.HasPrefix(t, []byte("From ")) {
			ls[i] = l[1:]
		}
	}
	return bytes.Join(ls, []byte("\n"))
}

// mboxName is the entry name of a mailbox's n-th message (from 1).
func mboxName(n int, subject string) string {
	subject = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 {
			return '_'
		}
		return r
	}, subject)
	if rs := []rune(subject); len(rs) > 60 {
		subject = string(rs[:60])
	}
	if subject = strings.TrimSpace(subject); subject == "" {
		return fmt.Sprintf("%05d.eml", n)
	}
	return fmt.Sprintf("%05d %s.eml", n, subject)
}

// readMbox reads a mailbox as a container of messages: each is an
// attachment (an .eml entry) of a mailMsg that stands for the box.
func readMbox(b []byte, lim Limits) (*mailMsg, []*mailMsg, error) {
	raw, more := splitMbox(b, maxMboxMessages)
	if len(raw) == 0 {
		return nil, nil, fmt.Errorf("%w: not an mbox mailbox (no \"From \" line at its start)", ErrMalformed)
	}
	box := &mailMsg{}
	var msgs []*mailMsg
	for i, r := range raw {
		m, err := readMail(r, lim)
		if err != nil {
			m = &mailMsg{stops: []string{err.Error()}}
		}
		msgs = append(msgs, m)
		box.atts = append(box.atts, mailAttachment{name: mboxName(i+1, m.subject), mimeType: mimeEML, data: r, message: true})
	}
	if more {
		box.stops = append(box.stops, fmt.Sprintf("the mailbox has more than %d messages (the limit): the rest is not read", maxMboxMessages))
	}
	return box, msgs, nil
}

// extractMbox reads a mailbox: one object per message with its headers
// (the messages' bodies and attachments are the entries the host extracts
// from the attachments tool), and the list of messages.
func extractMbox(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	box, msgs, err := readMbox(b, in.lim)
	if err != nil {
		return err
	}
	list := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		a := box.atts[i]
		list[i] = map[string]any{"name": a.name, "size": len(a.data), "mimeType": a.mimeType}
		var head []string
		for _, h := range [][2]string{{"From", m.from}, {"To", m.to}, {"Date", m.date}, {"Subject", m.subject}} {
			if h[1] != "" {
				head = append(head, h[0]+": "+h[1])
			}
		}
		if len(head) > 0 && !s.add(content.Object{ContentType: content.Text, Data: strings.Join(head, "\n"),
			Ref: content.Ref{Location: fmt.Sprintf("message:%d", i+1), Label: m.subject, Part: a.name}}) {
			break
		}
	}
	s.structure["messages"] = len(msgs)
	// The messages are the mailbox's files: the host takes them through
	// the attachments tool as entries.
	s.structure["attachments"] = list
	if cut {
		box.stops = append(box.stops, fmt.Sprintf("the mailbox is larger than %d bytes: the rest is not read", in.lim.MaxPartBytes))
	}
	if len(box.stops) > 0 {
		s.structure["stops"] = box.stops
		if s.truncated == "" {
			s.truncated = strings.Join(box.stops, "; ")
		}
	}
	return nil
}

package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// jsonMember is one top-level member: a key of an object, or an index of
// an array or of a stream of values (JSON Lines).
type jsonMember struct {
	key   string
	index int
	raw   json.RawMessage
}

// extractJSON pretty-prints JSON. A value too large for one block is split
// at its top-level members, each object's Location naming them
// ("json:$.a..$.c", "json:$[0:99]"); a stream of values (JSON Lines) is
// split the same way by record ("json:record 1-50"). Text that is not JSON
// is extracted as plain text.
func extractJSON(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	text := decodeText(b)
	dec := json.NewDecoder(strings.NewReader(text))
	var values []json.RawMessage
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			if len(values) == 0 || !cut {
				// Not JSON after all (or broken): keep it readable as text.
				s.structure["invalid"] = err.Error()
				return extractPlain(ctx, in, s)
			}
			break
		}
		values = append(values, v)
	}
	if cut {
		s.structure["inputCut"] = in.lim.MaxPartBytes
	}
	switch len(values) {
	case 0:
		return nil
	case 1:
		emitJSONValue(s, values[0], in.lim.BlockBytes)
		return nil
	}
	s.structure["records"] = len(values)
	members := make([]jsonMember, len(values))
	for i, v := range values {
		members[i] = jsonMember{index: i, raw: v}
	}
	emitJSONMembers(s, members, '[', in.lim.BlockBytes, func(a, z jsonMember) string {
		if a.index == z.index {
			return fmt.Sprintf("json:record %d", a.index+1)
		}
		return fmt.Sprintf("json:record %d-%d", a.index+1, z.index+1)
	})
	return nil
}

// emitJSONValue emits one value, split at its top-level members when its
// pretty form is larger than a block.
func emitJSONValue(s *sink, v json.RawMessage, size int) {
	pretty := indentJSON(v)
	if len(pretty) <= size {
		s.add(content.Object{ContentType: content.Text, Data: pretty, Ref: content.Ref{Location: "json:$"}})
		return
	}
	members, open := jsonMembers(v)
	if members == nil {
		s.add(content.Object{ContentType: content.Text, Data: pretty, Ref: content.Ref{Location: "json:$"}})
		return
	}
	emitJSONMembers(s, members, open, size, func(a, z jsonMember) string {
		if open == '[' {
			if a.index == z.index {
				return fmt.Sprintf("json:$[%d]", a.index)
			}
			return fmt.Sprintf("json:$[%d:%d]", a.index, z.index+1)
		}
		if a.index == z.index {
			return "json:" + jsonPath(a.key)
		}
		return "json:" + jsonPath(a.key) + ".." + jsonPath(z.key)
	})
}

// emitJSONMembers groups members into blocks, each rendered as an object or
// array of just those members.
func emitJSONMembers(s *sink, members []jsonMember, open byte, size int, loc func(a, z jsonMember) string) {
	var (
		group []jsonMember
		n     int
	)
	flush := func() bool {
		if len(group) == 0 {
			return true
		}
		var b strings.Builder
		close := "]"
		if open == '{' {
			close = "}"
		}
		b.WriteByte(open)
		b.WriteByte('\n')
		for i, m := range group {
			b.WriteString("  ")
			if open == '{' {
				k, _ := json.Marshal(m.key)
				b.Write(k)
				b.WriteString(": ")
			}
			b.WriteString(strings.ReplaceAll(indentJSON(m.raw), "\n", "\n  "))
			if i < len(group)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(close)
		ok := s.add(content.Object{ContentType: content.Text, Data: b.String(), Ref: content.Ref{Location: loc(group[0], group[len(group)-1])}})
		group, n = nil, 0
		return ok
	}
	for _, m := range members {
		l := len(m.raw) + len(m.key) + 8
		if n > 0 && n+l > size && !flush() {
			return
		}
		group = append(group, m)
		n += l
	}
	flush()
}

// jsonMembers splits an object or array into its members; nil for scalars.
func jsonMembers(v json.RawMessage) ([]jsonMember, byte) {
	dec := json.NewDecoder(bytes.NewReader(v))
	t, err := dec.Token()
	if err != nil {
		return nil, 0
	}
	delim, ok := t.(json.Delim)
	if !ok {
		return nil, 0
	}
	var out []jsonMember
	for i := 0; dec.More(); i++ {
		m := jsonMember{index: i}
		if delim == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, 0
			}
			m.key, _ = k.(string)
		}
		if err := dec.Decode(&m.raw); err != nil {
			return nil, 0
		}
		out = append(out, m)
	}
	return out, byte(delim)
}

func indentJSON(v json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, v, "", "  "); err != nil {
		return string(v)
	}
	return b.String()
}

var jsonIdent = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// jsonPath names a top-level key: $.key, or $["odd key"].
func jsonPath(key string) string {
	if jsonIdent.MatchString(key) {
		return "$." + key
	}
	return "$[" + strconv.Quote(key) + "]"
}

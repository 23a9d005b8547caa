package agent

import (
	"hash/maphash"
	"sync"

	"github.com/agenthost/agenthost/host/llm"
)

// tokenCount caches the token counts of a run's conversation. The loop
// counts the whole prompt before every round (to size the round's context
// and to decide on summarising), and tiktoken runs at some 7 MB/s: with a
// long history that is tens of milliseconds a round. Messages do not change
// once appended, so each is counted once; the tool definitions, fixed for
// the run, once too. llm.CountMessageTokens is additive (a fixed base, one
// term per message and one for the tools), which makes the cached sum equal
// to a full count. A message new to the run is looked up in the agent's
// shared cache first: the next request of a workflow sends its history
// again, as new strings, and hashing them costs far less than counting.
type tokenCount struct {
	model  string
	base   int // the request's fixed overhead (the reply primer)
	tools  int // the tool definitions' share, -1 until counted
	counts []counted
	shared *countCache // nil: none
}

// counted is one message's count with what identifies the message it was
// taken of: a message replaced in place (compaction) is counted again.
type counted struct {
	role   string
	size   int
	calls  int
	tokens int
}

func newTokenCount(model string, shared *countCache) *tokenCount {
	return &tokenCount{model: model, base: llm.CountMessageTokens(model, nil, nil), tools: -1, shared: shared}
}

// count is one message's share of a request's tokens.
func (t *tokenCount) count(m llm.Message) counted {
	c := fingerprint(m)
	c.tokens = t.shared.get(t.model, m, func() int { return llm.CountMessageTokens(t.model, []llm.Message{m}, nil) - t.base })
	return c
}

func fingerprint(m llm.Message) counted {
	return counted{role: m.Role, size: len(m.Content), calls: len(m.ToolCalls)}
}

// prompt is llm.CountMessageTokens(model, msgs, defs), counting only the
// messages it has not seen at their place.
func (t *tokenCount) prompt(msgs []llm.Message, defs []llm.ToolDef) int {
	if t.tools < 0 {
		t.tools = llm.CountMessageTokens(t.model, nil, defs) - t.base
	}
	if len(t.counts) > len(msgs) {
		t.counts = t.counts[:len(msgs)]
	}
	// A message whose role, size or tool calls differ from what was
	// counted at its place is not the one counted: count from there.
	for i, c := range t.counts {
		if f := fingerprint(msgs[i]); f.role != c.role || f.size != c.size || f.calls != c.calls {
			t.counts = t.counts[:i]
			break
		}
	}
	n := t.base + t.tools
	for i, m := range msgs {
		if i == len(t.counts) {
			t.counts = append(t.counts, t.count(m))
		}
		n += t.counts[i].tokens
	}
	return n
}

// splice keeps the counts in step with compaction, which replaces
// msgs[from:to] by nothing: later messages keep their counts.
func (t *tokenCount) splice(from, to int) {
	if from >= len(t.counts) {
		return
	}
	if to > len(t.counts) {
		t.counts = t.counts[:from]
		return
	}
	t.counts = append(t.counts[:from], t.counts[to:]...)
}

// put counts m as the message at index i, in place of the one counted
// there (insert false) or before it (insert true). Counts past the cached
// prefix are left to prompt.
func (t *tokenCount) put(i int, m llm.Message, insert bool) {
	if i > len(t.counts) || (!insert && i == len(t.counts)) {
		return
	}
	c := t.count(m)
	if insert {
		t.counts = append(t.counts[:i], append([]counted{c}, t.counts[i:]...)...)
		return
	}
	t.counts[i] = c
}

// countCache keeps message token counts across the runs of an agent, by a
// hash of the model and the message. It is bounded: when full, a quarter
// of it is dropped. A hash collision (2^-64 per pair) would only skew an
// estimate. Safe for concurrent use; a nil cache counts every time.
type countCache struct {
	seed maphash.Seed
	max  int

	mu sync.Mutex
	m  map[uint64]int
}

// countCacheEntries bounds the shared cache: some 100 workflows' histories
// of 20 messages with their tool rounds, at 16 bytes an entry.
const countCacheEntries = 1 << 14

func newCountCache(max int) *countCache {
	return &countCache{seed: maphash.MakeSeed(), max: max, m: make(map[uint64]int)}
}

func (c *countCache) key(model string, m llm.Message) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	// Every field is length-prefixed so that no two messages write the
	// same bytes.
	str := func(s string) {
		var n [8]byte
		for i := range n {
			n[i] = byte(len(s) >> (8 * i))
		}
		_, _ = h.Write(n[:])
		_, _ = h.WriteString(s)
	}
	str(model)
	str(m.Role)
	str(m.Name)
	str(m.ToolCallID)
	str(m.Content)
	for _, tc := range m.ToolCalls {
		str(tc.Name)
		str(tc.Arguments)
	}
	return h.Sum64()
}

// get returns the cached count of m, or counts it with count and keeps it.
func (c *countCache) get(model string, m llm.Message, count func() int) int {
	if c == nil {
		return count()
	}
	k := c.key(model, m)
	c.mu.Lock()
	n, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = count()
	c.mu.Lock()
	if len(c.m) >= c.max {
		drop := c.max / 4
		for k := range c.m {
			if drop == 0 {
				break
			}
			delete(c.m, k)
			drop--
		}
	}
	c.m[k] = n
	c.mu.Unlock()
	return n
}

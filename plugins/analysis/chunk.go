package main

import (
	"fmt"
	"strings"
)

// Model-aware chunking: the part size follows from the model in use and the
// call at hand, never a fixed size, so a large model gets few calls and a
// small one still fits. Pure functions over a token counter so they are
// tested without a host.

// counter counts the tokens of text for the model in use.
type counter func(text string) (int, error)

// Reserves of the calculation: the system message and the JSON structure of
// a request, on top of the instruction and the answer.
const (
	systemReserve   = 10
	messageOverhead = 100
	// safety keeps a fifth of the remaining context free: token counts of
	// the host and the provider may differ a little.
	safety = 0.8
	// minPartTokens: below this the model's context is too small to make
	// progress with this instruction.
	minPartTokens = 32
)

// partBudget is how many tokens of content one call may carry: the
// context less the prompt, the reserves and the answer, with the margin.
func partBudget(contextTokens, promptTokens, outputTokens int) (int, error) {
	remaining := contextTokens - promptTokens - systemReserve - messageOverhead - outputTokens
	budget := int(float64(remaining) * safety)
	if budget < minPartTokens {
		return 0, fmt.Errorf("the model's context (%d tokens) leaves no room for content after the instruction (%d tokens) and the answer (%d tokens): shorten the instruction",
			contextTokens, promptTokens, outputTokens)
	}
	return budget, nil
}

// split groups units into parts of at most budget tokens, in order. A unit
// larger than budget is cut at paragraph, line, sentence or word boundaries
// (halving until the pieces fit).
func split(units []string, budget int, count counter) ([]string, error) {
	var parts []string
	var cur strings.Builder
	curTokens := 0
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, cur.String())
			cur.Reset()
			curTokens = 0
		}
	}
	// An oversized unit is cut into pieces of at most a quarter of the
	// budget, which then pack parts at least three quarters full.
	piece := max(1, budget/4)
	var add func(text string, limit, depth int) error
	add = func(text string, limit, depth int) error {
		text = strings.TrimSpace(text)
		if text == "" {
			return nil
		}
		n, err := count(text)
		if err != nil {
			return err
		}
		if n > limit {
			a, b := halve(text)
			switch {
			case b != "" && depth < 40:
				if err := add(a, piece, depth+1); err != nil {
					return err
				}
				return add(b, piece, depth+1)
			case n > budget:
				return fmt.Errorf("a piece of %d tokens cannot be split to fit %d tokens", n, budget)
			}
		}
		if n > budget {
			return fmt.Errorf("a piece of %d tokens cannot be split to fit %d tokens", n, budget)
		}
		// Two newlines between units cost about one token.
		if curTokens > 0 && curTokens+n+1 > budget {
			flush()
		}
		if cur.Len() > 0 {
			cur.WriteString("\n\n")
			curTokens++
		}
		cur.WriteString(text)
		curTokens += n
		return nil
	}
	for _, u := range units {
		if err := add(u, budget, 0); err != nil {
			return nil, err
		}
	}
	flush()
	return parts, nil
}

// halve cuts text near its middle at the strongest boundary there: a blank
// line, a line break, a sentence end, a space; else at the middle rune.
func halve(text string) (string, string) {
	mid := len(text) / 2
	for _, sep := range []string{"\n\n", "\n", ". ", " "} {
		// The boundary nearest the middle on either side.
		before := strings.LastIndex(text[:mid], sep)
		after := strings.Index(text[mid:], sep)
		best := -1
		switch {
		case before > 0 && after >= 0:
			if mid-before <= after {
				best = before
			} else {
				best = mid + after
			}
		case before > 0:
			best = before
		case after >= 0:
			best = mid + after
		}
		if best > 0 && best+len(sep) < len(text) {
			return text[:best+len(sep)], text[best+len(sep):]
		}
	}
	// No boundary: cut at a rune boundary near the middle.
	for mid > 0 && mid < len(text) && (text[mid]&0xC0) == 0x80 {
		mid++
	}
	if mid <= 0 || mid >= len(text) {
		return text, ""
	}
	return text[:mid], text[mid:]
}

package extract

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agenthost/agenthost/pdk/content"
)

// csvDelimiter guesses the delimiter from the first lines: the candidate
// that occurs, outside quotes, the same non-zero number of times on each.
func csvDelimiter(text string) rune {
	sample := text[:min(len(text), 64<<10)]
	ls := lines(sample)
	if len(ls) > 1 && len(sample) == 64<<10 {
		ls = ls[:len(ls)-1] // possibly cut
	}
	ls = ls[:min(len(ls), 20)]
	best, bestScore := ',', 0
	for _, d := range []rune{',', ';', '\t', '|'} {
		counts := map[int]int{}
		for _, l := range ls {
			if n := countOutsideQuotes(l, d); n > 0 {
				counts[n]++
			}
		}
		for n, c := range counts {
			if score := c*100 + n; c > 0 && score > bestScore {
				best, bestScore = d, score
			}
		}
	}
	return best
}

func countOutsideQuotes(l string, d rune) int {
	n, quoted := 0, false
	for _, r := range l {
		switch {
		case r == '"':
			quoted = !quoted
		case r == d && !quoted:
			n++
		}
	}
	return n
}

// extractCSV emits the table in blocks of rows as Markdown tables, each
// under the file's header row, with Location "row:A-B" (rows from 1, the
// header being row 1).
func extractCSV(ctx context.Context, in input, s *sink) error {
	b, cut, err := readInput(in)
	if err != nil {
		return err
	}
	text := decodeText(b)
	d := '\t'
	if in.mime != "text/tab-separated-values" && !strings.HasSuffix(strings.ToLower(in.name), ".tsv") {
		d = csvDelimiter(text)
	}
	r := csv.NewReader(strings.NewReader(text))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = d, true, -1
	var (
		header []string
		rows   [][]string
		size   int
		first  = 2
		n      = 0 // records read
		cols   = 0
	)
	flush := func() bool {
		if len(rows) == 0 {
			return true
		}
		table := append([][]string{header}, rows...)
		ok := s.add(content.Object{ContentType: content.Text, Data: markdownTable(table),
			Ref:      content.Ref{Location: strings.Replace(lineRange(first, first+len(rows)-1), "line:", "row:", 1)},
			Metadata: map[string]any{"rows": len(rows), "format": "markdown"}})
		first += len(rows)
		rows, size = nil, 0
		return ok
	}
	var perr error
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			// A cut input ends in a broken record; anything else is
			// reported, keeping the rows before it.
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return err
			}
			perr = err
			break
		}
		n++
		cols = max(cols, len(rec))
		if header == nil {
			header = rec
			continue
		}
		rows = append(rows, rec)
		for _, f := range rec {
			size += len(f) + 3
		}
		if size >= in.lim.BlockBytes && !flush() {
			break
		}
		if n%1024 == 0 && s.full() {
			break
		}
	}
	if header == nil {
		if perr != nil {
			return fmt.Errorf("%w: %w", ErrMalformed, perr)
		}
		return nil
	}
	if len(rows) == 0 && first == 2 {
		// Only a header row: it is the table.
		s.add(content.Object{ContentType: content.Text, Data: markdownTable([][]string{header}),
			Ref: content.Ref{Location: "row:1"}, Metadata: map[string]any{"rows": 0, "format": "markdown"}})
	}
	flush()
	s.structure["rows"] = n
	s.structure["columns"] = cols
	s.structure["delimiter"] = string(d)
	if perr != nil && !cut {
		s.structure["error"] = perr.Error()
	}
	if cut {
		s.structure["inputCut"] = in.lim.MaxPartBytes
	}
	return nil
}

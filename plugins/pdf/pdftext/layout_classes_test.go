package pdftext

import (
	"fmt"
	"strings"
	"testing"
)

// The layout classes of issue 16: real documents of each class sit in
// testdata/corpus/pdf/classes (layout-*), with pdftotext -layout's pages
// beside them where poppler reads them right.

// linesInOrder checks that each of want is one whole line of got (white
// space normalised), in the order given.
func linesInOrder(got string, want []string) error {
	lines := strings.Split(got, "\n")
	at := 0
	for _, w := range want {
		for at < len(lines) && words(lines[at]) != w {
			at++
		}
		if at == len(lines) {
			return fmt.Errorf("no line %q (in this order)", w)
		}
		at++
	}
	return nil
}

// rotatedPDF is a one-page document whose page is turned by /Rotate rot
// and whose content draws five lines turned by the matrix cm.
func rotatedPDF(rot int, cm string, lines []string) []byte {
	var c strings.Builder
	fmt.Fprintf(&c, "q %s cm BT /F1 10 Tf 12 TL 72 700 Td ", cm)
	for _, l := range lines {
		fmt.Fprintf(&c, "(%s) ' ", l)
	}
	c.WriteString("ET Q")
	return buildPDF(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Rotate %d "+
			"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>", rot),
		"<< >> STREAM("+c.String()+")",
		helvetica,
	)
}

// TestRotatedPages: text that runs sideways on the displayed page (a page
// turned by /Rotate 90 or 270 whose text is drawn upright in user space,
// or text drawn turned on an upright page) is read in its own frame, line
// after line, as pdftotext reads it.
func TestRotatedPages(t *testing.T) {
	lines := []string{
		"The first line of the turned page",
		"comes before the second line, which",
		"is longer than the third line,",
		"and the fourth line is followed",
		"by the last one.",
	}
	for _, c := range []struct {
		name string
		rot  int
		cm   string
	}{
		{"rotate 90", 90, "1 0 0 1 0 0"},
		{"rotate 270", 270, "1 0 0 1 0 0"},
		{"rotate 180", 180, "1 0 0 1 0 0"},
		{"drawn turned left", 0, "0 1 -1 0 750 100"},
		{"drawn turned right", 0, "0 -1 1 0 -300 700"},
		{"rotate 90, drawn upright", 90, "0 1 -1 0 750 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := pageText(t, rotatedPDF(c.rot, c.cm, lines), 1)
			if err := linesInOrder(got, lines); err != nil {
				t.Errorf("%v:\n%s", err, got)
			}
		})
	}
	// Seminar's sample slides: the portrait slides are pages turned by
	// /Rotate 90 with the text drawn sideways (the landscape ones, turned
	// by 270, are drawn upright).
	got := classText(t, "layout-rotate-semsamp2", 5)
	want := []string{
		"• There is information overload in a",
		"network if there is some mechanism",
		"that, compared to the status quo, makes",
		"the senders and/or receivers better off",
		"by restricting the flow of information.’",
		"• There is information overload in a",
		"network if there is some mechanism",
		"that, compared to the status quo, makes",
		"the senders and/or receivers better off",
		"by restricting the flow of information.",
	}
	if err := linesInOrder(got, want); err != nil {
		t.Errorf("semsamp2 page 5: %v:\n%s", err, got)
	}
}

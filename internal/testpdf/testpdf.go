// Package testpdf makes small valid PDFs for tests that need a document with
// known text and no corpus file.
package testpdf

import "fmt"

// OnePage returns a valid one-page PDF whose text is text, set in Helvetica.
// text must not contain unbalanced parentheses or backslashes.
func OnePage(text string) []byte {
	stream := "BT /F1 12 Tf 72 720 Td (" + text + ") Tj ET"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	return build(objs)
}

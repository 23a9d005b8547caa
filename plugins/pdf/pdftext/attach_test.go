package pdftext

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/internal/testpdf"
)

// attachCase is a document with the attachments it holds: name, size and
// the start of the bytes (the reference is pdfdetach's listing and files).
type attachCase struct {
	name string
	pdf  func(tb testing.TB) []byte
	want []wantAttachment
}

type wantAttachment struct {
	name string
	size int
	head string
	page int
}

func attachCases() []attachCase {
	return []attachCase{
		{"apptools (name tree)", func(tb testing.TB) []byte {
			return testcorpus.Read(tb, "pdf", "classes", "attach-apptools.pdf")
		}, []wantAttachment{{"apptools.dtx", 15061, "% \\iffalse meta-comment", 0}}},
		{"authorarchive (annotations)", func(tb testing.TB) []byte {
			return testcorpus.Read(tb, "pdf", "classes", "attach-authorarchive-IEEEtran.pdf")
		}, []wantAttachment{
			{"\\AA@bibBibTeX ", 314, "\n@InProceedings", 1},
			{"\\AA@bibWord ", 721, "<?xml", 1},
			{"\\AA@bibEndnote ", 215, "%0 ", 1},
			{"\\AA@bibRIS ", 237, "TY  - ", 1},
		}},
		{"nested name tree and annotations", func(testing.TB) []byte { return nestedAttachments() }, []wantAttachment{
			{"a.txt", 12, "first file", 0},
			{"b.csv", 8, "x,y", 0},
			{"inner.pdf", len(innerPDF()), "%PDF", 1},
			{"../../etc/passwd", 5, "fake", 1},
		}},
	}
}

func innerPDF() []byte {
	return testpdf.WithAttachments("inner document", testpdf.File{Name: "deep.txt", Data: []byte("deep inside")})
}

// nestedAttachments has a file in the name tree's first kid and one in a
// kid of its second; a PDF (with its own attachment) and a file with a
// hostile name are attached to the page.
func nestedAttachments() []byte {
	return testpdf.WithAttachments("outer document",
		testpdf.File{Name: "a.txt", Data: []byte("first file\r\n")},
		testpdf.File{Name: "b.csv", Data: []byte("x,y\n1,2\n")},
		testpdf.File{Name: "inner.pdf", Data: innerPDF()},
		testpdf.File{Name: "../../etc/passwd", Data: []byte("fake\n")},
	)
}

// attachmentsFound counts the expected attachments listed with their name
// and page and whose bytes decode to the expected size and start.
func attachmentsFound(tb testing.TB) (found, total int, per map[string]string) {
	per = map[string]string{}
	for _, c := range attachCases() {
		d, err := Open(bytes.NewReader(c.pdf(tb)))
		if err != nil {
			tb.Fatalf("%s: %v", c.name, err)
		}
		atts, err := d.Attachments()
		if err != nil {
			tb.Fatalf("%s: %v", c.name, err)
		}
		n := 0
		for _, w := range c.want {
			for _, a := range atts {
				if a.Name != w.name || a.Page != w.page {
					continue
				}
				data, _, err := a.Data(1 << 20)
				if err == nil && len(data) == w.size && strings.HasPrefix(string(data), w.head) {
					n++
				}
				break
			}
		}
		per[c.name] = fmt.Sprintf("%d/%d (listed %d)", n, len(c.want), len(atts))
		found, total = found+n, total+len(c.want)
	}
	return found, total, per
}

func TestAttachments(t *testing.T) {
	found, total, per := attachmentsFound(t)
	t.Logf("attachments %d/%d %v", found, total, per)
	if found != total {
		t.Errorf("found %d of %d attachments: %v", found, total, per)
	}
	// The attached PDF's own attachment is its to list.
	d, err := Open(bytes.NewReader(innerPDF()))
	if err != nil {
		t.Fatal(err)
	}
	atts, err := d.Attachments()
	if err != nil || len(atts) != 1 || atts[0].Name != "deep.txt" {
		t.Fatalf("inner: %+v, %v", atts, err)
	}
	// A limit below the size fails before the bytes are kept.
	if _, _, err := atts[0].Data(4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Data(4) = %v, want ErrTooLarge", err)
	}
	// A document without attachments lists none.
	d, err = Open(bytes.NewReader(testpdf.OnePage("no attachments")))
	if err != nil {
		t.Fatal(err)
	}
	if atts, err := d.Attachments(); err != nil || len(atts) != 0 {
		t.Errorf("plain: %+v, %v", atts, err)
	}
}

// BenchmarkAttachmentsFound: the share of the documents' attached files
// listed and decoded whole.
func BenchmarkAttachmentsFound(b *testing.B) {
	for range b.N {
		found, total, per := attachmentsFound(b)
		figure.Report("pdf.attachments.found", float64(found)/float64(total), "ratio")
		b.Logf("per document: %v", per)
	}
}

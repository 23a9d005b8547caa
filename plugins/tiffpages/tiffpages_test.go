package tiffpages

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"golang.org/x/image/tiff"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestPages: the two pages of a fax TIFF written by libtiff's tiffcp are
// counted and each decodes as its own page (x/image/tiff alone reads the
// first only); a chain that loops or points outside the file ends there.
func TestPages(t *testing.T) {
	b := testcorpus.Read(t, "images", "fax-camlidl-2pages.tif")
	n, err := Count(b)
	if err != nil || n != 2 {
		t.Fatalf("Count = %d, %v; want 2", n, err)
	}
	var first []byte
	for pg := 1; pg <= 2; pg++ {
		p, err := Page(b, pg)
		if err != nil {
			t.Fatal(err)
		}
		img, err := tiff.Decode(bytes.NewReader(p))
		if err != nil {
			t.Fatalf("page %d: %v", pg, err)
		}
		var buf bytes.Buffer
		if err := tiff.Encode(&buf, img, nil); err != nil {
			t.Fatal(err)
		}
		if pg == 1 {
			first = buf.Bytes()
		} else if bytes.Equal(first, buf.Bytes()) {
			t.Errorf("page 2 decodes as page 1")
		}
	}
	for _, pg := range []int{0, 3} {
		if _, err := Page(b, pg); err == nil {
			t.Errorf("page %d of 2 given", pg)
		}
	}
	if _, err := Count([]byte("%PDF-1.4")); !errors.Is(err, ErrNotTIFF) {
		t.Errorf("a PDF counted: %v", err)
	}
	// A loop: the first IFD's next offset points back at itself.
	loop := bytes.Clone(b)
	off := binary.LittleEndian.Uint32(loop[4:8])
	if string(loop[:2]) == "MM" {
		t.Skip("big-endian test file")
	}
	cnt := binary.LittleEndian.Uint16(loop[off:])
	binary.LittleEndian.PutUint32(loop[int(off)+2+12*int(cnt):], off)
	if n, err := Count(loop); err != nil || n != 1 {
		t.Errorf("a looping chain: %d, %v; want 1", n, err)
	}
	// Past the end of the file.
	binary.LittleEndian.PutUint32(loop[int(off)+2+12*int(cnt):], uint32(len(loop)+100))
	if n, err := Count(loop); err != nil || n != 1 {
		t.Errorf("a chain out of the file: %d, %v; want 1", n, err)
	}
}

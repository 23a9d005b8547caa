package pdftext

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"testing"
	"unicode"
)

// The two scans of the corpus (a photographed book page as JPEG, and the
// same page as a CCITT Group 4 fax) are image only; no page whose
// reference text (pdftotext) has words is.
func TestImageOnlyPages(t *testing.T) {
	dir, names := corpusFiles(t)
	scans := map[string]bool{"ocrmypdf-c02-22-scanned": true, "fax-c02-22-g4": true}
	seen := 0
	for _, name := range names {
		d, err := openCorpus(t, dir, name)
		if err != nil {
			continue
		}
		ps, err := d.Prescan()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ref := referencePages(dir, name)
		for i, p := range ps.Pages {
			imageOnly := p.TextStatus == TextImageOnly
			if scans[name] {
				seen++
				if !imageOnly || p.Images != 1 {
					t.Errorf("%s page %d: status %q with %d images, want imageOnly with 1", name, p.Page, p.TextStatus, p.Images)
				}
				pc, err := d.Page(p.Page)
				if err != nil || pc.Status != TextImageOnly || pc.Images != 1 {
					t.Errorf("%s page %d: Page says %q, %d images, %v", name, p.Page, pc.Status, pc.Images, err)
				}
				continue
			}
			if i < len(ref) && imageOnly && nonSpace(ref[i]) >= 4*negligibleGlyphs {
				t.Errorf("%s page %d: image only, but pdftotext reads %d characters on it", name, p.Page, nonSpace(ref[i]))
			}
		}
	}
	if seen != 2 {
		t.Fatalf("saw %d scanned pages, want 2 (is the corpus complete?)", seen)
	}
}

func nonSpace(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

func TestPageImagesJPEG(t *testing.T) {
	dir, _ := corpusFiles(t)
	d, err := openCorpus(t, dir, "ocrmypdf-c02-22-scanned")
	if err != nil {
		t.Fatal(err)
	}
	ims, w, h, err := d.PageImages(1)
	if err != nil || len(ims) != 1 {
		t.Fatalf("%d images, %v", len(ims), err)
	}
	im := ims[0]
	if im.Filter != "DCTDecode" || im.JPEG == nil || im.Width != 800 || im.Height != 981 || !im.Upright() {
		t.Fatalf("image %+v", im.Filter)
	}
	// The JPEG is the file's own bytes: it decodes to its declared size.
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(im.JPEG))
	if err != nil || cfg.Width != 800 || cfg.Height != 981 {
		t.Fatalf("JPEG %+v %v", cfg, err)
	}
	// It covers the page (pdfimages: 150 ppi on a 384x470.9 pt page).
	if a := im.CTM[0] * -im.CTM[3]; a < 0.95*w*h {
		t.Errorf("image covers %.0f of the page's %.0f pt²", a, w*h)
	}
}

// The fax's CCITT Group 4 image decodes to the pixels poppler's pdfimages
// gives (testdata/fax-c02-22-g4.pdfimages.png, pdfimages -png).
func TestPageImagesCCITT(t *testing.T) {
	dir, _ := corpusFiles(t)
	d, err := openCorpus(t, dir, "fax-c02-22-g4")
	if err != nil {
		t.Fatal(err)
	}
	ims, _, _, err := d.PageImages(1)
	if err != nil || len(ims) != 1 {
		t.Fatalf("%d images, %v", len(ims), err)
	}
	im := ims[0]
	if im.Filter != "CCITTFaxDecode" || im.Image == nil || im.Err != "" {
		t.Fatalf("filter %q, err %q", im.Filter, im.Err)
	}
	f, err := os.ReadFile("testdata/fax-c02-22-g4.pdfimages.png")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := png.Decode(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	if im.Image.Bounds() != ref.Bounds() {
		t.Fatalf("bounds %v, reference %v", im.Image.Bounds(), ref.Bounds())
	}
	diff, black := 0, 0
	b := ref.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g := gray(im.Image, x, y)
			if g != gray(ref, x, y) {
				diff++
			}
			if g == 0 {
				black++
			}
		}
	}
	if diff != 0 {
		t.Errorf("%d of %d pixels differ from poppler's", diff, b.Dx()*b.Dy())
	}
	// Text on paper: some ink, mostly white.
	if black == 0 || black > b.Dx()*b.Dy()/3 {
		t.Errorf("%d black pixels of %d", black, b.Dx()*b.Dy())
	}
}

func gray(im image.Image, x, y int) uint8 {
	r, g, b, _ := im.At(x, y).RGBA()
	return uint8((r + g + b) / 3 >> 8)
}

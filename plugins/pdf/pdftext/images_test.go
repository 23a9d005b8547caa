package pdftext

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
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

// A scan that already carries an OCR text layer (the words drawn
// invisibly, render mode 3, over the page image, as OCRmyPDF and scanners
// write it) is read as text: not image only, its words extracted.
func TestInvisibleTextLayerIsText(t *testing.T) {
	img := "<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8 >> STREAM(\x00\xff\xff\x00)"
	content := "q 612 0 0 792 0 0 cm /Im1 Do Q BT 3 Tr /F1 12 Tf 72 700 Td (We went tiptoeing along a path amongst the trees) Tj ET"
	pdf := onePage(content, "<< /XObject << /Im1 5 0 R >> /Font << /F1 6 0 R >> >>", img, helvetica)
	d, err := Open(bytes.NewReader(pdf))
	if err != nil {
		t.Fatal(err)
	}
	pc, err := d.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	if pc.Status != TextComplete || pc.Images != 1 || !strings.Contains(words(pc.Text), "tiptoeing along a path") {
		t.Fatalf("status %q, %d images, text %q", pc.Status, pc.Images, pc.Text)
	}
	ps, err := d.Prescan()
	if err != nil || ps.Pages[0].TextStatus != TextComplete {
		t.Fatalf("pre-scan status %q (%v)", ps.Pages[0].TextStatus, err)
	}
	// Without the text layer the same page is image only.
	bare := onePage("q 612 0 0 792 0 0 cm /Im1 Do Q", "<< /XObject << /Im1 5 0 R >> >>", img)
	if d, _ := Open(bytes.NewReader(bare)); d == nil {
		t.Fatal("bare page does not open")
	} else if pc, _ := d.Page(1); pc.Status != TextImageOnly {
		t.Fatalf("bare scan: status %q", pc.Status)
	}
}

// Samples are read by their colour space, bit depth and Decode array.
func TestPageImageSamples(t *testing.T) {
	tests := []struct {
		name, dict, data string
		want             []color.RGBA // the pixels, row by row
	}{
		{"gray 8", "/ColorSpace /DeviceGray /BitsPerComponent 8", "\x00\xff", []color.RGBA{{0, 0, 0, 255}, {255, 255, 255, 255}}},
		{"gray 1, Decode inverted", "/ColorSpace /DeviceGray /BitsPerComponent 1 /Decode [1 0]", "\x80", []color.RGBA{{0, 0, 0, 255}, {255, 255, 255, 255}}},
		{"RGB", "/ColorSpace /DeviceRGB /BitsPerComponent 8", "\xff\x00\x00\x00\x00\xff", []color.RGBA{{255, 0, 0, 255}, {0, 0, 255, 255}}},
		{"CMYK", "/ColorSpace /DeviceCMYK /BitsPerComponent 8", "\x00\x00\x00\xff\x00\x00\x00\x00", []color.RGBA{{0, 0, 0, 255}, {255, 255, 255, 255}}},
		{"indexed", "/ColorSpace [/Indexed /DeviceRGB 1 <00ff00ff0000>] /BitsPerComponent 8", "\x00\x01", []color.RGBA{{0, 255, 0, 255}, {255, 0, 0, 255}}},
		{"image mask", "/ImageMask true", "\x40", []color.RGBA{{0, 0, 0, 255}, {255, 255, 255, 255}}},
		{"a short stream is white", "/ColorSpace /DeviceGray /BitsPerComponent 8", "\x00", []color.RGBA{{0, 0, 0, 255}, {255, 255, 255, 255}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img := "<< /Type /XObject /Subtype /Image /Width 2 /Height 1 " + tc.dict + " >> STREAM(" + tc.data + ")"
			pdf := onePage("q 100 0 0 50 10 20 cm /Im1 Do Q", "<< /XObject << /Im1 5 0 R >> >>", img)
			d, err := Open(bytes.NewReader(pdf))
			if err != nil {
				t.Fatal(err)
			}
			ims, _, _, err := d.PageImages(1)
			if err != nil || len(ims) != 1 || ims[0].Err != "" {
				t.Fatalf("%+v %v", ims, err)
			}
			for x, want := range tc.want {
				r, g, b, a := ims[0].Image.At(x, 0).RGBA()
				if got := (color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}); got != want {
					t.Errorf("pixel %d = %v, want %v", x, got, want)
				}
			}
			// Placed by its CTM in device space (y down from the top).
			if m := ims[0].CTM; m != [6]float64{100, 0, 0, -50, 10, 772} || !ims[0].Upright() {
				t.Errorf("CTM %v", m)
			}
		})
	}
}

// Hostile images are refused one by one, not the page.
func TestPageImagesHostile(t *testing.T) {
	for _, tc := range []struct{ name, img, err string }{
		{"huge", "<< /Type /XObject /Subtype /Image /Width 100000 /Height 100000 /ColorSpace /DeviceGray /BitsPerComponent 8 >> STREAM(x)", "pixels"},
		{"JBIG2", "<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /JBIG2Decode >> STREAM(x)", "not decoded"},
		{"a bad depth", "<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 7 >> STREAM(xxxx)", "bits per component"},
		{"an unknown colour space", "<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /Pattern /BitsPerComponent 8 >> STREAM(xxxx)", "colour space"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdf := onePage("q 100 0 0 50 10 20 cm /Im1 Do Q", "<< /XObject << /Im1 5 0 R >> >>", tc.img)
			d, err := Open(bytes.NewReader(pdf))
			if err != nil {
				t.Fatal(err)
			}
			ims, _, _, err := d.PageImages(1)
			if err != nil || len(ims) != 1 || !strings.Contains(ims[0].Err, tc.err) {
				t.Fatalf("%+v %v, want an image error mentioning %q", ims, err, tc.err)
			}
		})
	}
}

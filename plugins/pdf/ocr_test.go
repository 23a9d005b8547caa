package main

import (
	"image"
	"image/color"
	"testing"

	"github.com/agenthost/agenthost/plugins/pdf/pdftext"
)

func solid(w, h int, c color.Color) image.Image {
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			im.Set(x, y, c)
		}
	}
	return im
}

// compose draws a page's images where the page paints them: a grey image
// in the top-left quarter, a red one rotated by 90° in the bottom-right
// quarter (its first row running down the page's right edge), and a mask
// whose white leaves what lies under it.
func TestCompose(t *testing.T) {
	grey := image.NewGray(image.Rect(0, 0, 1, 1)) // black
	twoTone := image.NewRGBA(image.Rect(0, 0, 2, 1))
	twoTone.Set(0, 0, color.RGBA{255, 0, 0, 255})
	twoTone.Set(1, 0, color.RGBA{0, 0, 255, 255})
	mask := image.NewGray(image.Rect(0, 0, 2, 1))
	mask.Pix[0], mask.Pix[1] = 0xff, 0x00 // left transparent, right paints
	// Page 144x144 pt: the canvas is 400x400 px (200 dpi).
	ims := []pdftext.PageImage{
		{CTM: [6]float64{72, 0, 0, -72, 0, 72}, Image: grey},
		// Rotated: image x runs down the page, image y (up) runs right to left.
		{CTM: [6]float64{0, 72, -72, 0, 144, 72}, Image: twoTone},
		{CTM: [6]float64{144, 0, 0, -36, 0, 126}, Image: mask, Mask: true},
	}
	got, err := compose(ims, 144, 144)
	if err != nil {
		t.Fatal(err)
	}
	if b := got.Bounds(); b.Dx() != 400 || b.Dy() != 400 {
		t.Fatalf("canvas %v", b)
	}
	at := func(x, y int) color.RGBA {
		r, g, b, _ := got.At(x, y).RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}
	}
	for _, c := range []struct {
		name string
		x, y int
		want color.RGBA
	}{
		{"grey image", 50, 50, color.RGBA{0, 0, 0, 255}},
		{"white page", 300, 50, color.RGBA{255, 255, 255, 255}},
		{"rotated image's first sample", 300, 220, color.RGBA{255, 0, 0, 255}},
		{"rotated image's second sample", 300, 370, color.RGBA{0, 0, 255, 255}},
		{"mask's white leaves the page", 50, 320, color.RGBA{255, 255, 255, 255}},
		{"mask's black paints over the rotated image", 300, 340, color.RGBA{0, 0, 0, 255}},
	} {
		if g := at(c.x, c.y); g != c.want {
			t.Errorf("%s at %d,%d = %v, want %v", c.name, c.x, c.y, g, c.want)
		}
	}
}

func TestFileImage(t *testing.T) {
	png, err := encodePNG(solid(10, 5, color.White))
	if err != nil {
		t.Fatal(err)
	}
	res, data, err := fileImage(png)
	if err != nil || res.Sent != "file" || res.MIMEType != "image/png" || res.Width != 10 || len(data) != len(png) {
		t.Fatalf("PNG: %+v %v", res, err)
	}
	if _, _, err := fileImage([]byte("%PDF-1.4 not an image")); err == nil {
		t.Fatal("a PDF was taken as an image")
	}
}

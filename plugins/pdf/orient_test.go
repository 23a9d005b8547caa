package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
)

// withOrientation is a JPEG of 60x30 pixels whose left third is black,
// carrying an EXIF APP1 segment with orientation o (0: no EXIF at all),
// as a phone camera writes it (little-endian TIFF, IFD0 holding the tag).
func withOrientation(t *testing.T, o int) []byte {
	img := image.NewGray(image.Rect(0, 0, 60, 30))
	for y := range 30 {
		for x := range 60 {
			if x >= 20 {
				img.SetGray(x, y, color.Gray{0xff})
			}
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if o == 0 {
		return b
	}
	tiffData := []byte("II*\x00\x08\x00\x00\x00")
	ifd := make([]byte, 2+12+4)
	binary.LittleEndian.PutUint16(ifd[0:], 1)
	binary.LittleEndian.PutUint16(ifd[2:], 0x0112)
	binary.LittleEndian.PutUint16(ifd[4:], 3)
	binary.LittleEndian.PutUint32(ifd[6:], 1)
	binary.LittleEndian.PutUint16(ifd[10:], uint16(o))
	seg := append([]byte("Exif\x00\x00"), append(tiffData, ifd...)...)
	app1 := []byte{0xff, 0xe1, 0, 0}
	binary.BigEndian.PutUint16(app1[2:], uint16(len(seg)+2))
	return append(append(append([]byte{}, b[:2]...), append(app1, seg...)...), b[2:]...)
}

// TestUprightPhoto: a photo whose EXIF orientation says it is stored on
// its side or upside down is sent to OCR turned upright (the black third
// that was the stored image's left edge is where the orientation puts
// it); an upright one, or one without EXIF, is sent as it is. Before,
// every JPEG went as stored, so a phone photo of a letter reached the
// model on its side.
func TestUprightPhoto(t *testing.T) {
	dark := func(img image.Image, x, y int) bool {
		g := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
		return g.Y < 0x40
	}
	for _, c := range []struct {
		o              int
		w, h           int
		darkX, darkY   int // a point inside the black part, upright
		lightX, lightY int
	}{
		{3, 60, 30, 55, 15, 5, 15}, // turned 180°: black on the right
		{6, 30, 60, 15, 5, 15, 55}, // turned 90° clockwise: black on top
		{8, 30, 60, 15, 55, 15, 5}, // turned 90° counter-clockwise: black at the bottom
		{2, 60, 30, 55, 15, 5, 15}, // mirrored
		{5, 30, 60, 15, 5, 15, 55}, // transposed
		{7, 30, 60, 15, 55, 15, 5}, // transversed
		{4, 60, 30, 5, 15, 55, 15}, // flipped: black stays left
	} {
		data := withOrientation(t, c.o)
		if got := exifOrientation(data); got != c.o {
			t.Fatalf("orientation %d read as %d", c.o, got)
		}
		res, out, err := fileImage(data)
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != "oriented" || img.Bounds().Dx() != c.w || img.Bounds().Dy() != c.h || res.Width != c.w {
			t.Errorf("orientation %d: sent %q %dx%d, want oriented %dx%d", c.o, res.Sent, img.Bounds().Dx(), img.Bounds().Dy(), c.w, c.h)
			continue
		}
		if !dark(img, c.darkX, c.darkY) || dark(img, c.lightX, c.lightY) {
			t.Errorf("orientation %d: turned the wrong way", c.o)
		}
	}
	for _, o := range []int{0, 1} {
		data := withOrientation(t, o)
		res, out, err := fileImage(data)
		if err != nil || res.Sent != "file" || !bytes.Equal(out, data) {
			t.Errorf("orientation %d: sent %q (%v), want the file as it is", o, res.Sent, err)
		}
	}
}

package main

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/jpeg"
)

// Photos of text taken with a phone are stored as the sensor saw them,
// with an EXIF Orientation tag saying how to turn them upright; vision
// models do not all read the tag, and read text on its side or upside
// down badly or not at all. A JPEG whose tag says to turn it is turned
// here, in the sandbox, and sent upright.

// exifOrientation is a JPEG's EXIF Orientation (1-8), 1 when it has none
// or it cannot be read.
func exifOrientation(b []byte) int {
	if len(b) < 4 || b[0] != 0xff || b[1] != 0xd8 {
		return 1
	}
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xff {
			return 1
		}
		marker := b[i+1]
		if marker == 0xd9 || marker == 0xda { // end, or start of scan: no more headers
			return 1
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return 1
		}
		seg := b[i+4 : i+2+n]
		if marker == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// tiffOrientation reads tag 0x0112 of the first IFD of EXIF's TIFF data.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	off := int(bo.Uint32(t[4:]))
	if off < 8 || off+2 > len(t) {
		return 1
	}
	n := int(bo.Uint16(t[off:]))
	for k := range n {
		e := off + 2 + 12*k
		if e+12 > len(t) {
			return 1
		}
		if bo.Uint16(t[e:]) == 0x0112 && bo.Uint16(t[e+2:]) == 3 { // SHORT
			if v := int(bo.Uint16(t[e+8:])); v >= 1 && v <= 8 {
				return v
			}
			return 1
		}
	}
	return 1
}

// orient turns img upright by its EXIF orientation o (2-8: mirrored,
// turned 180°, transposed, turned 90° clockwise, transversed, turned 90°
// counter-clockwise).
func orient(img image.Image, o int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, ow, oh))
	for y := range oh {
		for x := range ow {
			var sx, sy int
			switch o {
			case 2:
				sx, sy = w-1-x, y
			case 3:
				sx, sy = w-1-x, h-1-y
			case 4:
				sx, sy = x, h-1-y
			case 5:
				sx, sy = y, x
			case 6:
				sx, sy = y, h-1-x
			case 7:
				sx, sy = w-1-y, h-1-x
			case 8:
				sx, sy = w-1-y, x
			default:
				sx, sy = x, y
			}
			out.Set(x, y, img.At(b.Min.X+sx, b.Min.Y+sy))
		}
	}
	return out
}

// uprightJPEG decodes a JPEG whose EXIF orientation says to turn it, turns
// it and encodes it again (as JPEG: a photo); ok is false for a JPEG
// already upright, sent as it is.
func uprightJPEG(data []byte) (out []byte, width, height int, ok bool, err error) {
	o := exifOrientation(data)
	if o == 1 {
		return nil, 0, 0, false, nil
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, 0, 0, false, err
	}
	if float64(cfg.Width)*float64(cfg.Height) > maxFilePixels {
		return nil, 0, 0, false, nil // too large to turn: sent as it is
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, 0, 0, false, err
	}
	img = fit(orient(img, o))
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		return nil, 0, 0, false, err
	}
	return buf.Bytes(), img.Bounds().Dx(), img.Bounds().Dy(), true, nil
}

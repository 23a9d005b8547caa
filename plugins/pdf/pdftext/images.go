package pdftext

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Page images for OCR: the image XObjects a page paints, where it paints
// them, decoded from their filters (DCT kept as the JPEG it is; CCITT fax,
// Flate, LZW, run-length and the ASCII filters decoded by pdfcpu's filters,
// the samples then read by their colour space). JPX and JBIG2 are not
// decoded (no pure-Go decoder): such an image is reported, not drawn.

// PageImage is one image a page paints.
type PageImage struct {
	// CTM maps the image's unit square to device space (points, y down,
	// the crop box's corner at the origin, rotation applied): image space
	// (0,1) is the first sample row's left end.
	CTM [6]float64
	// Width and Height are the image's samples.
	Width, Height int
	// Filter is the image's last filter ("" for none).
	Filter string
	// JPEG holds a DCTDecode image's bytes as stored; Image is nil then
	// unless Decode is called.
	JPEG []byte
	// Image is the decoded picture of any other supported filter.
	Image image.Image
	// Mask: a stencil mask, whose white is transparent (only its black
	// paints).
	Mask bool
	// Err says why the image could not be decoded (an unsupported filter,
	// damaged data); the other fields but CTM may then be empty.
	Err string
}

// Upright reports whether the image is drawn unrotated and unflipped,
// axis-aligned, so that its own pixels show the page as it looks.
func (im PageImage) Upright() bool {
	m := im.CTM
	return m[1] == 0 && m[2] == 0 && m[0] > 0 && m[3] < 0
}

// Decoded returns the picture, decoding a JPEG when needed.
func (im PageImage) Decoded() (image.Image, error) {
	if im.Image != nil {
		return im.Image, nil
	}
	if im.JPEG == nil {
		return nil, errors.New(im.Err)
	}
	return jpeg.Decode(bytes.NewReader(im.JPEG))
}

// Limits on what one page's images may take: a hostile page cannot make
// the plugin hold more than this.
const (
	maxPageImages = 64
	maxImagePixel = 60_000_000 // 60 Mpx: a 600 dpi A3 scan is 70 Mpx at 1 bpc; 7,700 x 7,700
)

// PageImages returns the images page n paints (image XObjects, in forms
// too; inline images are counted by the page map but not returned), each
// with its placement, decoded. An image that cannot be decoded comes with
// Err set; a page that cannot be read is an error. Its size in points is
// the page's displayed size.
func (d *Document) PageImages(n int) (images []PageImage, width, height float64, err error) {
	defer recoverTo(&err, fmt.Sprintf("page %d images", n))
	if n < 1 || n > len(d.pages) {
		return nil, 0, 0, fmt.Errorf("pdftext: page %d of %d: %w", n, len(d.pages), ErrPageRange)
	}
	p := &d.pages[n-1]
	content, _, err := d.pageContent(p, nil)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("pdftext: page %d: %w", n, err)
	}
	var st pageStats
	in := newInterp(d, p, &st)
	var placed []placedImage
	in.placed = &placed
	in.run(content, p.resources, 0)
	for _, pl := range placed {
		images = append(images, d.pageImage(pl))
	}
	return images, in.pageW, in.pageH, nil
}

// placedImage is an image XObject and the CTM it was painted with.
type placedImage struct {
	sd  types.StreamDict
	ctm matrix
}

func (d *Document) pageImage(pl placedImage) PageImage {
	im := PageImage{CTM: pl.ctm}
	sd := pl.sd
	w, _ := d.number(sd.Dict["Width"])
	h, _ := d.number(sd.Dict["Height"])
	im.Width, im.Height = int(w), int(h)
	if im.Width <= 0 || im.Height <= 0 || float64(im.Width)*float64(im.Height) > maxImagePixel {
		im.Err = fmt.Sprintf("image of %gx%g samples (at most %d pixels)", w, h, maxImagePixel)
		return im
	}
	if fp := sd.FilterPipeline; len(fp) > 0 {
		im.Filter = fp[len(fp)-1].Name
	}
	switch im.Filter {
	case "JPXDecode", "JBIG2Decode":
		im.Err = im.Filter + " images are not decoded"
		return im
	}
	data, err := d.streamData(sd)
	if err != nil {
		im.Err = err.Error()
		return im
	}
	if im.Filter == "DCTDecode" {
		// Kept as it is: what a vision model reads best, at no cost.
		im.JPEG = data
		return im
	}
	if b, ok := d.deref(sd.Dict["ImageMask"]).(types.Boolean); ok && bool(b) {
		im.Mask = true
	}
	img, err := d.samples(sd, im.Width, im.Height, data)
	if err != nil {
		im.Err = err.Error()
		return im
	}
	im.Image = img
	return im
}

// samples reads an image's decoded samples by its colour space, bits per
// component and Decode array into a picture (gray or RGB). An image mask
// paints black where its samples say so, on white.
func (d *Document) samples(sd types.StreamDict, w, h int, data []byte) (image.Image, error) {
	mask := false
	if b, ok := d.deref(sd.Dict["ImageMask"]).(types.Boolean); ok && bool(b) {
		mask = true
	}
	bpcF, _ := d.number(sd.Dict["BitsPerComponent"])
	bpc := int(bpcF)
	if mask || im1(sd) {
		bpc = 1
	}
	switch bpc {
	case 1, 2, 4, 8, 16:
	default:
		return nil, fmt.Errorf("%d bits per component", bpc)
	}
	cs := colourSpace{comps: 1}
	if !mask {
		cs = d.colourSpace(sd.Dict["ColorSpace"], 0)
		if cs.comps == 0 {
			return nil, errors.New("unsupported colour space")
		}
	}
	rowBits := w * cs.comps * bpc
	rowBytes := (rowBits + 7) / 8
	if len(data) < rowBytes*h {
		// A short stream: what is there is drawn, the rest stays white
		// (poppler does the same).
		data = append(data, bytes.Repeat([]byte{0xff}, rowBytes*h-len(data))...)
	}
	maxV := float64(int(1)<<bpc - 1)
	// Decode: [min max] per component; [1 0] inverts (common for masks
	// and scans stored as "white is 1").
	dec := make([]float64, 0, 2*cs.comps)
	for _, o := range d.array(sd.Dict["Decode"]) {
		v, _ := d.number(o)
		dec = append(dec, v)
	}
	if len(dec) != 2*cs.comps {
		dec = dec[:0]
		for range cs.comps {
			if cs.indexed != nil {
				dec = append(dec, 0, maxV)
			} else {
				dec = append(dec, 0, 1)
			}
		}
		if mask {
			dec = []float64{0, 1}
		}
	}
	sample := func(row []byte, i int) float64 {
		switch bpc {
		case 8:
			return float64(row[i])
		case 16:
			return float64(uint16(row[2*i])<<8 | uint16(row[2*i+1]))
		}
		bit := i * bpc
		return float64(row[bit/8] >> (8 - bpc - bit%8) & byte(maxV))
	}
	gray := cs.comps == 1 && cs.indexed == nil
	if gray && !cs.tint && (bpc == 1 || bpc == 8) {
		// Scans are 1-bit (fax) or 8-bit grey: read without the general
		// path's per-sample arithmetic (a page is millions of samples).
		return fastGray(data, w, h, rowBytes, bpc, dec[0], dec[1], mask), nil
	}
	var gimg *image.Gray
	var rimg *image.RGBA
	if gray {
		gimg = image.NewGray(image.Rect(0, 0, w, h))
	} else {
		rimg = image.NewRGBA(image.Rect(0, 0, w, h))
	}
	vals := make([]float64, cs.comps)
	for y := range h {
		row := data[y*rowBytes : (y+1)*rowBytes]
		for x := range w {
			for c := range cs.comps {
				v := sample(row, x*cs.comps+c)
				vals[c] = dec[2*c] + v*(dec[2*c+1]-dec[2*c])/maxV
			}
			if mask {
				// Sample 0 paints (after Decode): black on white.
				g := uint8(255)
				if vals[0] < 0.5 {
					g = 0
				}
				gimg.Pix[y*gimg.Stride+x] = g
				continue
			}
			if gray {
				gimg.Pix[y*gimg.Stride+x] = clamp8(vals[0] * 255)
				continue
			}
			rimg.SetRGBA(x, y, cs.rgb(vals))
		}
	}
	if gray {
		return gimg, nil
	}
	return rimg, nil
}

// fastGray reads 1- or 8-bit grey samples through a 256-entry table
// (Decode applied; a mask's painted samples black, the rest white).
func fastGray(data []byte, w, h, rowBytes, bpc int, d0, d1 float64, mask bool) *image.Gray {
	maxV := float64(int(1)<<bpc - 1)
	var lut [256]uint8
	for v := range 1 << bpc {
		x := d0 + float64(v)*(d1-d0)/maxV
		if mask {
			if x < 0.5 {
				lut[v] = 0
			} else {
				lut[v] = 255
			}
			continue
		}
		lut[v] = clamp8(x * 255)
	}
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		row := data[y*rowBytes : (y+1)*rowBytes]
		out := img.Pix[y*img.Stride : y*img.Stride+w]
		if bpc == 8 {
			for x := range out {
				out[x] = lut[row[x]]
			}
			continue
		}
		for x := range out {
			out[x] = lut[row[x>>3]>>(7-uint(x&7))&1]
		}
	}
	return img
}

// im1 reports a CCITT or JBIG2 image without a bit depth, which is 1.
func im1(sd types.StreamDict) bool {
	_, ok := sd.Dict["BitsPerComponent"]
	return !ok
}

// colourSpace is what reading samples needs of a colour space.
type colourSpace struct {
	comps int
	cmyk  bool
	// indexed: the palette (base colour space's components per entry).
	indexed []byte
	base    *colourSpace
	// tint: Separation or DeviceN, read as the darkness of one ink.
	tint bool
}

func (cs colourSpace) rgb(v []float64) color.RGBA {
	switch {
	case cs.indexed != nil:
		i := int(v[0])
		n := cs.base.comps
		if i < 0 || (i+1)*n > len(cs.indexed) {
			return color.RGBA{255, 255, 255, 255}
		}
		bv := make([]float64, n)
		for c := range n {
			bv[c] = float64(cs.indexed[i*n+c]) / 255
		}
		return cs.base.rgb(bv)
	case cs.tint:
		g := clamp8((1 - v[0]) * 255)
		return color.RGBA{g, g, g, 255}
	case cs.cmyk:
		k := v[3]
		return color.RGBA{clamp8((1 - v[0]) * (1 - k) * 255), clamp8((1 - v[1]) * (1 - k) * 255), clamp8((1 - v[2]) * (1 - k) * 255), 255}
	case cs.comps == 3:
		return color.RGBA{clamp8(v[0] * 255), clamp8(v[1] * 255), clamp8(v[2] * 255), 255}
	}
	g := clamp8(v[0] * 255)
	return color.RGBA{g, g, g, 255}
}

// colourSpace resolves an image's colour space: the device spaces, the
// CIE-based ones by their component count, ICCBased by /N (its
// alternate's), Indexed over any of these, Separation and DeviceN as ink.
func (d *Document) colourSpace(o types.Object, depth int) colourSpace {
	if depth > 4 {
		return colourSpace{}
	}
	switch v := d.deref(o).(type) {
	case types.Name:
		switch v {
		case "DeviceGray", "G", "CalGray":
			return colourSpace{comps: 1}
		case "DeviceRGB", "RGB", "CalRGB", "Lab":
			return colourSpace{comps: 3}
		case "DeviceCMYK", "CMYK":
			return colourSpace{comps: 4, cmyk: true}
		}
	case types.Array:
		if len(v) == 0 {
			return colourSpace{}
		}
		switch d.name(v[0]) {
		case "CalGray":
			return colourSpace{comps: 1}
		case "CalRGB", "Lab":
			return colourSpace{comps: 3}
		case "ICCBased":
			if len(v) < 2 {
				return colourSpace{}
			}
			n, _ := d.number(d.dict(v[1])["N"])
			switch int(n) {
			case 1:
				return colourSpace{comps: 1}
			case 3:
				return colourSpace{comps: 3}
			case 4:
				return colourSpace{comps: 4, cmyk: true}
			}
		case "Indexed", "I":
			if len(v) < 4 {
				return colourSpace{}
			}
			base := d.colourSpace(v[1], depth+1)
			if base.comps == 0 || base.indexed != nil {
				return colourSpace{}
			}
			var lut []byte
			switch l := d.deref(v[3]).(type) {
			case types.StringLiteral:
				b, err := types.Unescape(string(l))
				if err == nil {
					lut = b
				}
			case types.HexLiteral:
				lut, _ = l.Bytes()
			case types.StreamDict:
				lut, _ = d.streamData(l)
			}
			if lut == nil {
				return colourSpace{}
			}
			return colourSpace{comps: 1, indexed: lut, base: &base}
		case "Separation":
			return colourSpace{comps: 1, tint: true}
		case "DeviceN":
			if len(v) >= 2 {
				if names := d.array(v[1]); len(names) == 1 {
					return colourSpace{comps: 1, tint: true}
				}
			}
		}
	}
	return colourSpace{}
}

func clamp8(v float64) uint8 {
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	}
	return uint8(v + 0.5)
}

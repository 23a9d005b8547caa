package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"net/http"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/input"
	"github.com/agenthost/agenthost/pdk/model"
	"github.com/agenthost/agenthost/plugins/pdf/pdftext"
	"github.com/agenthost/agenthost/plugins/tiffpages"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// OCR: a page's images are taken out of the PDF here, inside the sandbox
// (a JPEG as it is; CCITT fax, Flate and the other filters decoded and
// re-encoded as PNG; a page of several images, or of one placed rotated or
// small, composed at its place on a white page), and read by the host's
// OCR model through the model capability. The host calls these tools for
// a user (the file's uploader), who is billed; a call without one (an
// ingestion) cannot reach a model, so extraction never spends.

type ocrPageArgs struct {
	Page   int    `json:"page" description:"the page to read, from 1" minimum:"1"`
	Prompt string `json:"prompt,omitempty" description:"instructions for the OCR model; empty takes the host's"`
}

type ocrImageArgs struct {
	Name     string `json:"name,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	Page     int    `json:"page,omitempty" description:"the page of a multi-page TIFF to read, from 1 (default 1)" minimum:"1"`
	Prompt   string `json:"prompt,omitempty" description:"instructions for the OCR model; empty takes the host's"`
}

// ocrResult is what ocrPage and ocrImage answer: the text read, what was
// sent (Sent: "jpeg" the stored JPEG, "decoded" one image re-encoded as
// PNG, "composed" the page drawn as PNG, "file" the image file as it is,
// "oriented" a JPEG photo turned upright by its EXIF orientation)
// and what it cost.
type ocrResult struct {
	Page         int      `json:"page,omitempty"`
	Text         string   `json:"text"`
	Sent         string   `json:"sent"`
	MIMEType     string   `json:"mimeType"`
	Width        int      `json:"width"`
	Height       int      `json:"height"`
	Bytes        int      `json:"bytes"`
	Images       int      `json:"images"`
	Skipped      []string `json:"skipped,omitempty"`
	FinishReason string   `json:"finishReason"`
	CostCHF      float64  `json:"costCHF"`
	Model        string   `json:"model"`
}

// Bounds of what is sent: OpenAI scales an image to fit 2048x2048 at high
// detail, so more pixels cost transfer and nothing else; 200 dpi is what
// OCR engines read best.
const (
	ocrMaxSide  = 2048
	ocrDPI      = 200
	ocrMaxBytes = 20 << 20 // the host's model.ocr bound per image
	// coverage: one image over this share of the page is the page.
	coverage = 0.9
)

// pageImage is page n as one picture for the OCR model.
func pageImage(d *pdftext.Document, n int) (ocrResult, []byte, error) {
	ims, w, h, err := d.PageImages(n)
	if err != nil {
		return ocrResult{}, nil, pdk.Errorf("invalid_arguments", "%v", err)
	}
	res := ocrResult{Page: n}
	var usable []pdftext.PageImage
	for _, im := range ims {
		if im.Err != "" {
			res.Skipped = append(res.Skipped, im.Err)
			continue
		}
		usable = append(usable, im)
	}
	res.Images = len(usable)
	if len(usable) == 0 {
		return res, nil, pdk.Errorf("no_images", "page %d has no image that can be read (%d found)", n, len(ims))
	}
	if len(usable) == 1 && usable[0].Upright() && !usable[0].Mask && area(usable[0].CTM) >= coverage*w*h {
		im := usable[0]
		if im.JPEG != nil && len(im.JPEG) <= ocrMaxBytes && jpegSendable(im.JPEG) {
			res.Sent, res.MIMEType, res.Width, res.Height, res.Bytes = "jpeg", "image/jpeg", im.Width, im.Height, len(im.JPEG)
			return res, im.JPEG, nil
		}
		if im.Image != nil && im.Width <= ocrMaxSide && im.Height <= ocrMaxSide {
			b, err := encodePNG(im.Image)
			if err != nil {
				return res, nil, err
			}
			res.Sent, res.MIMEType, res.Width, res.Height, res.Bytes = "decoded", "image/png", im.Width, im.Height, len(b)
			return res, b, nil
		}
	}
	canvas, err := compose(usable, w, h)
	if err != nil {
		return res, nil, err
	}
	b, err := encodePNG(canvas)
	if err != nil {
		return res, nil, err
	}
	res.Sent, res.MIMEType, res.Width, res.Height, res.Bytes = "composed", "image/png", canvas.Bounds().Dx(), canvas.Bounds().Dy(), len(b)
	return res, b, nil
}

// jpegSendable: a JPEG vision endpoints read (grey or YCbCr; not CMYK,
// which Adobe's JPEGs store inverted and providers refuse or misread).
func jpegSendable(b []byte) bool {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(b))
	return err == nil && cfg.ColorModel != color.CMYKModel
}

// area is the device-space area of the unit square under m.
func area(m [6]float64) float64 { return math.Abs(m[0]*m[3] - m[1]*m[2]) }

// compose draws the images where the page paints them on a white page of
// w x h points, at ocrDPI or less so that its longer side fits ocrMaxSide;
// a grey page when every image is grey.
func compose(ims []pdftext.PageImage, w, h float64) (image.Image, error) {
	if w <= 0 || h <= 0 {
		return nil, pdk.Errorf("invalid_document", "page of %gx%g points", w, h)
	}
	scale := min(ocrDPI/72.0, ocrMaxSide/max(w, h))
	cw, ch := max(1, int(w*scale)), max(1, int(h*scale))
	grey := true
	dec := make([]image.Image, len(ims))
	for i, im := range ims {
		img, err := im.Decoded()
		if err != nil {
			return nil, pdk.Errorf("invalid_document", "image %d: %v", i+1, err)
		}
		dec[i] = img
		if _, ok := img.(*image.Gray); !ok {
			grey = false
		}
	}
	var out draw
	if grey {
		g := image.NewGray(image.Rect(0, 0, cw, ch))
		for i := range g.Pix {
			g.Pix[i] = 0xff
		}
		out = draw{gray: g}
	} else {
		r := image.NewRGBA(image.Rect(0, 0, cw, ch))
		for i := range r.Pix {
			r.Pix[i] = 0xff
		}
		out = draw{rgba: r}
	}
	for i, im := range ims {
		paint(out, dec[i], im, scale, cw, ch)
	}
	if grey {
		return out.gray, nil
	}
	return out.rgba, nil
}

type draw struct {
	gray *image.Gray
	rgba *image.RGBA
}

// paint draws img by its CTM (scaled to canvas pixels): each canvas pixel
// within the image's bounds is mapped back into the image's unit square
// and takes the nearest sample, so rotations and flips come out right.
func paint(out draw, img image.Image, im pdftext.PageImage, scale float64, cw, ch int) {
	m := im.CTM
	for i := range m {
		m[i] *= scale
	}
	det := m[0]*m[3] - m[1]*m[2]
	if math.Abs(det) < 1e-9 {
		return
	}
	// Bounds of the unit square's corners on the canvas.
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, c := range [][2]float64{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		x, y := c[0]*m[0]+c[1]*m[2]+m[4], c[0]*m[1]+c[1]*m[3]+m[5]
		x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
	}
	b := img.Bounds()
	iw, ih := float64(b.Dx()), float64(b.Dy())
	gsrc, _ := img.(*image.Gray)
	for py := max(0, int(y0)); py < min(ch, int(math.Ceil(y1))); py++ {
		for px := max(0, int(x0)); px < min(cw, int(math.Ceil(x1))); px++ {
			// Inverse of the affine map at the pixel's centre.
			dx, dy := float64(px)+0.5-m[4], float64(py)+0.5-m[5]
			u := (dx*m[3] - dy*m[2]) / det
			v := (dy*m[0] - dx*m[1]) / det
			if u < 0 || u >= 1 || v <= 0 || v > 1 {
				continue
			}
			sx, sy := b.Min.X+int(u*iw), b.Min.Y+int((1-v)*ih)
			var g uint8
			var c color.RGBA
			if gsrc != nil {
				g = gsrc.Pix[(sy-b.Min.Y)*gsrc.Stride+(sx-b.Min.X)]
				c = color.RGBA{g, g, g, 0xff}
			} else {
				r, gg, bb, _ := img.At(sx, sy).RGBA()
				c = color.RGBA{uint8(r >> 8), uint8(gg >> 8), uint8(bb >> 8), 0xff}
				g = uint8((299*uint32(c.R) + 587*uint32(c.G) + 114*uint32(c.B)) / 1000)
			}
			if im.Mask && g > 127 {
				continue // a mask's white is not painted
			}
			if out.gray != nil {
				out.gray.Pix[py*out.gray.Stride+px] = g
			} else {
				out.rgba.SetRGBA(px, py, c)
			}
		}
	}
}

func encodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, pdk.Errorf("internal", "PNG: %v", err)
	}
	return buf.Bytes(), nil
}

// fileImage is an image file as the OCR model takes it: PNG, JPEG, GIF
// and WEBP as they are (if small enough); TIFF (fax TIFFs included: CCITT
// G3 and G4) and BMP decoded and re-encoded as PNG, as is a PNG or JPEG
// too large to send.
func fileImage(data []byte) (ocrResult, []byte, error) {
	mime := http.DetectContentType(data)
	if mime == "image/jpeg" && jpegSendable(data) {
		// A photo stored on its side: sent upright.
		b, w, h, ok, err := uprightJPEG(data)
		if err != nil {
			return ocrResult{}, nil, pdk.Errorf("invalid_document", "image: %v", err)
		}
		if ok {
			return ocrResult{Sent: "oriented", MIMEType: "image/jpeg", Width: w, Height: h, Bytes: len(b), Images: 1}, b, nil
		}
	}
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		if len(data) <= ocrMaxBytes && (mime != "image/jpeg" || jpegSendable(data)) {
			res := ocrResult{Sent: "file", MIMEType: mime, Bytes: len(data), Images: 1}
			if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
				res.Width, res.Height = cfg.Width, cfg.Height
			}
			return res, data, nil
		}
	}
	var img image.Image
	var err error
	switch {
	case mime == "image/bmp":
		img, err = bmp.Decode(bytes.NewReader(data))
	case bytes.HasPrefix(data, []byte("II*\x00")) || bytes.HasPrefix(data, []byte("MM\x00*")):
		img, err = decodeTIFF(data)
	case mime == "image/png":
		img, err = png.Decode(bytes.NewReader(data))
	case mime == "image/jpeg":
		img, err = jpeg.Decode(bytes.NewReader(data))
	default:
		return ocrResult{}, nil, pdk.Errorf("unsupported", "%s images cannot be read by OCR (PNG, JPEG, GIF, WEBP, TIFF and BMP can)", mime)
	}
	if err != nil {
		return ocrResult{}, nil, pdk.Errorf("invalid_document", "image: %v", err)
	}
	img = fit(img)
	b, err := encodePNG(img)
	if err != nil {
		return ocrResult{}, nil, err
	}
	return ocrResult{Sent: "decoded", MIMEType: "image/png", Width: img.Bounds().Dx(), Height: img.Bounds().Dy(), Bytes: len(b), Images: 1}, b, nil
}

// maxImageFile bounds the image file read whole into the plugin.
const maxImageFile = 64 << 20

// maxFilePixels bounds a decoded image file (checked from its header
// before decoding): 60 Mpx.
const maxFilePixels = 60_000_000

func decodeTIFF(data []byte) (image.Image, error) {
	cfg, err := tiff.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || float64(cfg.Width)*float64(cfg.Height) > maxFilePixels {
		return nil, fmt.Errorf("a TIFF of %dx%d pixels (at most %d)", cfg.Width, cfg.Height, maxFilePixels)
	}
	return tiff.Decode(bytes.NewReader(data))
}

// fit scales img down (nearest sample) so that its longer side is at most
// ocrMaxSide.
func fit(img image.Image) image.Image {
	b := img.Bounds()
	if b.Dx() <= ocrMaxSide && b.Dy() <= ocrMaxSide {
		return img
	}
	s := float64(ocrMaxSide) / float64(max(b.Dx(), b.Dy()))
	w, h := max(1, int(float64(b.Dx())*s)), max(1, int(float64(b.Dy())*s))
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			out.Set(x, y, img.At(b.Min.X+int(float64(x)/s), b.Min.Y+int(float64(y)/s)))
		}
	}
	return out
}

// readByModel sends one picture to the OCR model.
func readByModel(res ocrResult, data []byte, prompt string) (ocrResult, error) {
	resp, err := model.OCR(model.OCRRequest{Images: []model.Image{{MIMEType: res.MIMEType, Data: data}}, Prompt: prompt, Purpose: "ocr"})
	if err != nil {
		return res, err
	}
	res.Text, res.FinishReason, res.CostCHF, res.Model = resp.Text, resp.FinishReason, resp.CostCHF, resp.Model
	return res, nil
}

func registerOCR() {
	pdk.Tool("ocrPage", "Reads the text of a scanned page: its images, taken out of the PDF and composed, read by the host's OCR model (capability model).", func(a ocrPageArgs) (ocrResult, error) {
		d, err := open("")
		if err != nil {
			return ocrResult{}, err
		}
		if a.Page < 1 || a.Page > d.PageCount() {
			return ocrResult{}, pdk.Errorf("invalid_arguments", "page %d (the document has %d pages)", a.Page, d.PageCount())
		}
		res, data, err := pageImage(d, a.Page)
		if err != nil {
			return res, err
		}
		return readByModel(res, data, a.Prompt)
	}, pdk.ReadOnly())
	pdk.Tool("ocrImage", "Reads the text of an image file (a photo or scan of text: PNG, JPEG, GIF, WEBP, TIFF including fax TIFFs, BMP) with the host's OCR model.", func(a ocrImageArgs) (ocrResult, error) {
		n, err := input.Size()
		if err != nil {
			return ocrResult{}, err
		}
		if n > maxImageFile {
			return ocrResult{}, pdk.Errorf("too_large", "an image file of %d bytes (OCR reads up to %d)", n, maxImageFile)
		}
		r, err := input.Open()
		if err != nil {
			return ocrResult{}, err
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			return ocrResult{}, pdk.Errorf("invalid_document", "reading the image: %v", err)
		}
		if a.Page > 1 {
			// A page of a multi-page TIFF (a fax): the file as if that
			// page were its first.
			if data, err = tiffpages.Page(data, a.Page); err != nil {
				return ocrResult{}, pdk.Errorf("invalid_arguments", "%v", err)
			}
		}
		res, img, err := fileImage(data)
		if err != nil {
			return res, err
		}
		res.Page = a.Page
		return readByModel(res, img, a.Prompt)
	}, pdk.ReadOnly())
}

package extract

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"path"
	"strconv"
	"strings"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"

	"github.com/agenthost/agenthost/plugins/tiffpages"
)

// imageDecoders read only an image's header (DecodeConfig), chosen by the
// sniffed format; no pixels are decoded.
var imageDecoders = map[string]func(io.Reader) (image.Config, error){
	"png":  png.DecodeConfig,
	"jpeg": jpeg.DecodeConfig,
	"gif":  gif.DecodeConfig,
	"webp": webp.DecodeConfig,
	"bmp":  bmp.DecodeConfig,
	"tiff": tiff.DecodeConfig,
}

// imageFormat names an image format from its leading bytes, then from the
// file name's extension for the formats only a name tells (EMF, WMF, SVG).
func imageFormat(head []byte, name string) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return "jpeg"
	case bytes.HasPrefix(head, []byte("GIF8")):
		return "gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "webp"
	case bytes.HasPrefix(head, []byte("BM")):
		return "bmp"
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return "tiff"
	case len(head) >= 44 && binary.LittleEndian.Uint32(head) == 1 && string(head[40:44]) == " EMF":
		return "emf"
	case bytes.HasPrefix(head, []byte{0xd7, 0xcd, 0xc6, 0x9a}):
		return "wmf"
	}
	switch ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), ".")); ext {
	case "jpg", "jpe":
		return "jpeg"
	case "tif":
		return "tiff"
	case "emf", "wmf", "svg", "emz", "wmz", "ico", "heic", "avif":
		return ext
	}
	return ""
}

// probeImage reads an image's header: format and, where the decoder knows
// it, dimensions. An unknown or broken header leaves the dimensions out
// rather than failing: the image is still an object.
func probeImage(r io.ReaderAt, size int64, name string) mediaInfo {
	head := make([]byte, min(size, 64))
	n, _ := r.ReadAt(head, 0)
	info := mediaInfo{kind: contentImage, format: imageFormat(head[:n], name), size: size}
	if dec, ok := imageDecoders[info.format]; ok {
		cfg, err := dec(io.NewSectionReader(r, 0, size))
		if err == nil {
			info.width, info.height = cfg.Width, cfg.Height
		} else {
			info.problem = err.Error()
		}
	}
	if info.format == "emf" && n >= 24 {
		// The EMF header's bounds rectangle, in device units.
		l, t := int32(binary.LittleEndian.Uint32(head[8:])), int32(binary.LittleEndian.Uint32(head[12:]))
		r, b := int32(binary.LittleEndian.Uint32(head[16:])), int32(binary.LittleEndian.Uint32(head[20:]))
		if r > l && b > t {
			info.width, info.height = int(r-l)+1, int(b-t)+1
		}
	}
	return info
}

// extractImage makes the one object of an image file.
func extractImage(ctx context.Context, in input, s *sink) error {
	info := probeImage(in.r, in.size, in.name)
	if info.format == "" {
		return fmt.Errorf("%w: not an image this package reads", ErrMalformed)
	}
	if info.problem != "" {
		return fmt.Errorf("%w: %s header: %s", ErrMalformed, info.format, info.problem)
	}
	o := info.object("file")
	o.Ref.Label = path.Base(in.name)
	if in.lim.InlineMediaBytes > 0 && in.size <= in.lim.InlineMediaBytes {
		inline(&o, io.NewSectionReader(in.r, 0, in.size))
	}
	s.add(o)
	s.structure["format"] = info.format
	if info.width > 0 {
		s.structure["dimensions"] = strconv.Itoa(info.width) + "x" + strconv.Itoa(info.height)
	}
	if info.format == "tiff" {
		tiffPageMap(in, s)
	}
	return nil
}

// tiffPageWarning is a page map's reason for a page of a multi-page TIFF,
// which only OCR reads.
const tiffPageWarning = "image only: a page of a multi-page image file (a fax or a scan); its words are found only once OCR has read it"

// tiffPageMap gives a multi-page TIFF (a fax, a scanner's batch) a page
// map of its pages, each image only, so that OCR reads every page and not
// the first only.
func tiffPageMap(in input, s *sink) {
	if in.size > in.lim.MaxPartBytes {
		return
	}
	b := make([]byte, in.size)
	if _, err := in.r.ReadAt(b, 0); err != nil && err != io.EOF {
		return
	}
	n, err := tiffpages.Count(b)
	if err != nil || n < 2 {
		return
	}
	pages := make([]map[string]any, n)
	for i := range pages {
		pages[i] = map[string]any{"page": i + 1, "images": 1, "textStatus": "imageOnly", "warning": tiffPageWarning}
		if p, err := tiffpages.Page(b, i+1); err == nil {
			if cfg, err := tiff.DecodeConfig(bytes.NewReader(p)); err == nil {
				pages[i]["dimensions"] = strconv.Itoa(cfg.Width) + "x" + strconv.Itoa(cfg.Height)
			}
		}
	}
	s.structure["pages"] = n
	s.structure["pageMap"] = pages
}

package extract

import (
	"bytes"
	"image"

	"golang.org/x/image/tiff"

	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestMultiPageTIFF: a two-page fax TIFF has a page map of its two pages,
// each image only, so that OCR reads both; a one-page TIFF has none (the
// image file is its one page). Before, a TIFF was one picture: its first
// page.
func TestMultiPageTIFF(t *testing.T) {
	idx, _ := mustRun(t, testcorpus.Read(t, "images", "fax-camlidl-2pages.tif"), "fax.tif", "", Limits{})
	pm, _ := idx.Structure["pageMap"].([]map[string]any)
	if idx.Structure["pages"] != 2 || len(pm) != 2 {
		t.Fatalf("structure %v", idx.Structure)
	}
	for i, p := range pm {
		if p["page"] != i+1 || p["textStatus"] != "imageOnly" || p["dimensions"] != "827x1170" {
			t.Errorf("page %d: %v", i+1, p)
		}
	}
	idx, _ = mustRun(t, tiffOf(t), "one.tif", "", Limits{})
	if _, ok := idx.Structure["pageMap"]; ok {
		t.Errorf("a one-page TIFF has a page map: %v", idx.Structure)
	}
}

// tiffOf is a one-page 8x8 TIFF.
func tiffOf(t *testing.T) []byte {
	var b bytes.Buffer
	if err := tiff.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 8)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

package progress

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/ocr"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/pdk/knowledge/wire"
)

// Progress is how far a paged document's indexing is (wire.Progress).
type Report = wire.Progress

// Of says how many of a content's pages are searchable so far: an
// on-demand PDF's pages extracted (on demand or by the background
// completion), less the image-only pages OCR has not read; nil for a
// content without pages or not indexed yet.
func Of(st kindex.ContentState) *Report {
	if st.Status != kindex.StatusIndexed && st.Status != kindex.StatusEmbedding {
		return nil
	}
	total := ondemand.PageCount(st.Index)
	imageOnly := kindex.ImageOnlyPages(st.Index)
	if total == 0 && len(imageOnly) > 0 {
		total = 1 // an image file
	}
	if total == 0 {
		return nil
	}
	extracted := kindex.ExtractedPages(st.Index)
	onDemand := ondemand.Is(st.Index)
	if !onDemand {
		extracted = ondemand.PagesWithin(nil, 1, total)
	}
	read := kindex.OCRPages(st.Index)
	unread := 0
	for _, pg := range imageOnly {
		if _, ok := slices.BinarySearch(read, pg); !ok {
			unread++
		}
	}
	searchable := 0
	for _, pg := range extracted {
		if !slices.Contains(imageOnly, pg) || slices.Contains(read, pg) {
			searchable++
		}
	}
	p := &Report{Pages: total, Searchable: searchable, ImageOnly: len(imageOnly)}
	ocrState := kindex.OCRStateOf(st.Index)
	if ocrState != nil {
		p.OCR = ocrState.Status
	} else if unread > 0 {
		p.OCR = kindex.OCRPending
	}
	extracting := onDemand && len(extracted) < total
	ocrGoing := unread > 0 && (p.OCR == kindex.OCRPending || p.OCR == kindex.OCRRunning)
	p.Pending = extracting || ocrGoing
	msg := fmt.Sprintf("%s of %s pages searchable", thousands(searchable), thousands(total))
	if total == 1 && len(imageOnly) == 1 && ondemand.PageCount(st.Index) == 0 {
		msg = "the image's text is searchable"
		if unread > 0 {
			msg = "the image's text is not searchable yet"
		}
	}
	if extracting {
		msg += fmt.Sprintf("; %s still being extracted in the background", pagesAre(total-len(extracted), ""))
	}
	switch {
	case unread == 0 && len(imageOnly) > 0 && ondemand.PageCount(st.Index) > 0:
		msg += fmt.Sprintf("; %s read by OCR", pagesAre(len(imageOnly), "image-only "))
	case unread > 0 && p.OCR == kindex.OCRNotConfigured:
		msg += fmt.Sprintf("; %s not read: %s", pagesAre(unread, "image-only "), ocr.NoModel)
	case unread > 0 && p.OCR == kindex.OCRStopped:
		msg += fmt.Sprintf("; %s not read: OCR stopped: %s", pagesAre(unread, "image-only "), ocrState.Message)
	case unread > 0:
		msg += fmt.Sprintf("; %s being read by OCR in the background (%d of %d done)", pagesAre(unread, "image-only "), len(imageOnly)-unread, len(imageOnly))
	}
	p.Message = msg
	return p
}

// pagesAre is "1 page is" or "1,038 pages are", kind before "page".
func pagesAre(n int, kind string) string {
	if n == 1 {
		return "1 " + kind + "page is"
	}
	return thousands(n) + " " + kind + "pages are"
}

// thousands writes n with commas between thousands (1,158).
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

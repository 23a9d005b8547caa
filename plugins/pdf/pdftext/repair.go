package pdftext

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
)

// Repair of files whose end is missing: a truncated download or upload loses
// the cross-reference table and the trailer, which pdfcpu needs to find the
// catalog, so it gives up although every complete object is still there.
// rebuildXref finds the objects by their "N G obj" headers, drops the
// incomplete last one, and appends a fresh table and a trailer naming the
// catalog. Writers that put the catalog and page tree last (pdfTeX) lose
// them first: then a new catalog and a flat page tree over the page objects
// found, in object-number order, stand in for them. Objects that lived only inside object streams (PDF 1.5 files
// compress most objects so) cannot be found this way without the
// cross-reference stream that indexed them, so such files stay unreadable.

// maxRepairInput bounds the files we try to repair, as the repair copies
// the input once.
const maxRepairInput = 1 << 30

// rebuildXref returns the data cut after its last complete object with a
// new cross-reference table and trailer, or false when it finds neither a
// catalog nor pages.
func rebuildXref(data []byte) ([]byte, bool) {
	if len(data) > maxRepairInput || !bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")) {
		return nil, false
	}
	end := bytes.LastIndex(data, []byte("endobj"))
	if end < 0 {
		return nil, false
	}
	data = data[:end+len("endobj")]
	type entry struct {
		off int
		gen int
	}
	objs := map[int]entry{}
	maxNr := 0
	root := -1
	var pages []int
	eachObjectHeader(data, 1<<23, func(nr, gen, start, at int) {
		objs[nr] = entry{off: start, gen: gen}
		maxNr = max(maxNr, nr)
		// The catalog: "/Type /Catalog" before this object's end.
		body := data[at:min(len(data), at+4096)]
		if e := bytes.Index(body, []byte("endobj")); e >= 0 {
			body = body[:e]
		}
		if bytes.Contains(body, []byte("/Catalog")) && bytes.Contains(body, []byte("/Pages")) {
			root = nr
		}
		if isPageObject(body) {
			pages = append(pages, nr)
		}
	})
	if len(objs) == 0 || (root < 0 && len(pages) == 0) {
		return nil, false
	}
	var b bytes.Buffer
	b.Grow(len(data) + 20*(maxNr+3) + 16*len(pages) + 256)
	b.Write(data)
	b.WriteString("\n")
	if root < 0 {
		slices.Sort(pages)
		pages = slices.Compact(pages)
		root = maxNr + 1
		objs[root] = entry{off: b.Len()}
		fmt.Fprintf(&b, "%d 0 obj\n<< /Type /Catalog /Pages %d 0 R >>\nendobj\n", root, root+1)
		objs[root+1] = entry{off: b.Len()}
		fmt.Fprintf(&b, "%d 0 obj\n<< /Type /Pages /Count %d /Kids [", root+1, len(pages))
		for _, p := range pages {
			fmt.Fprintf(&b, "%d 0 R ", p)
		}
		b.WriteString("] >>\nendobj\n")
		maxNr += 2
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", maxNr+1)
	for nr := 1; nr <= maxNr; nr++ {
		if e, ok := objs[nr]; ok {
			fmt.Fprintf(&b, "%010d %05d n \n", e.off, e.gen)
		} else {
			b.WriteString("0000000000 65535 f \n")
		}
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", maxNr+1, root, xref)
	return b.Bytes(), true
}

// objectHeader reads "N G obj" ending at the "obj" found at index at, which
// must start a line (or the file) and be followed by a delimiter.
// eachObjectHeader calls fn for every "N G obj" header in data, in order,
// whose number is in 1..maxNr: the number, generation, where the header
// starts and where its "obj" stands. Repairs find objects this way when the
// cross-reference cannot be trusted.
func eachObjectHeader(data []byte, maxNr int, fn func(nr, gen, start, at int)) {
	for i := 0; ; {
		k := bytes.Index(data[i:], []byte("obj"))
		if k < 0 {
			return
		}
		at := i + k
		i = at + 3
		nr, gen, start, ok := objectHeader(data, at)
		if !ok || nr <= 0 || nr > maxNr {
			continue
		}
		fn(nr, gen, start, at)
	}
}

func objectHeader(data []byte, at int) (nr, gen, start int, ok bool) {
	if after := at + 3; after < len(data) && isRegular(data[after]) {
		return 0, 0, 0, false // "objects", "obj2"
	}
	i := at - 1
	skipSpace := func() {
		for i >= 0 && (data[i] == ' ' || data[i] == '\t') {
			i--
		}
	}
	number := func() (int, bool) {
		j := i
		for i >= 0 && data[i] >= '0' && data[i] <= '9' {
			i--
		}
		if i == j || j-i > 10 {
			return 0, false
		}
		v, err := strconv.Atoi(string(data[i+1 : j+1]))
		return v, err == nil
	}
	skipSpace()
	gen, ok1 := number()
	if i < 0 || (data[i] != ' ' && data[i] != '\t') {
		return 0, 0, 0, false
	}
	skipSpace()
	nr, ok2 := number()
	if !ok1 || !ok2 || (i >= 0 && data[i] != '\n' && data[i] != '\r') {
		return 0, 0, 0, false
	}
	return nr, gen, i + 1, true
}

// isPageObject tells a page dictionary ("/Type /Page", not "/Pages") by
// the body of its object.
func isPageObject(body []byte) bool {
	for i := 0; ; {
		k := bytes.Index(body[i:], []byte("/Page"))
		if k < 0 {
			return false
		}
		at := i + k
		i = at + 5
		if i < len(body) && isRegular(body[i]) {
			continue // /Pages, /PageLabels
		}
		j := at - 1
		for j >= 0 && isSpace(body[j]) {
			j--
		}
		if j >= 4 && string(body[j-4:j+1]) == "/Type" {
			return true
		}
	}
}

package pdftext

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// TestLazyMatchesPdfcpu: every corpus PDF the lazy reader opens reads the
// same through it as through pdfcpu's eager reader: page count, outline,
// pre-scan and the text of every page; and so do the corpus PDFs
// rewritten by pdfcpu with object and cross-reference streams, and merged
// into one without them (as the long-document benchmark builds its file).
// Those it refuses are the encrypted and headless ones, which pdfcpu then
// opens or refuses.
func TestLazyMatchesPdfcpu(t *testing.T) {
	api.DisableConfigDir()
	dir, names := corpusFiles(t)
	lazy, docs := 0, 0
	var merge []io.ReadSeeker
	check := func(name string, data []byte) {
		docs++
		eager, eerr := openContext(bytes.NewReader(data), "")
		ld, lerr := openObjects(bytes.NewReader(data))
		if lerr != nil {
			t.Logf("%s: lazy reader refuses (%v); pdfcpu: %v", name, lerr, eerr)
			return
		}
		lazy++
		if eerr != nil {
			t.Logf("%s: pdfcpu fails (%v), the lazy reader opens %d pages", name, eerr, ld.PageCount())
			return
		}
		if ld.PageCount() != eager.PageCount() {
			t.Errorf("%s: %d pages lazily, %d eagerly", name, ld.PageCount(), eager.PageCount())
			return
		}
		if !reflect.DeepEqual(ld.Outline(), eager.Outline()) {
			t.Errorf("%s: outlines differ", name)
		}
		lp, lerr := ld.Prescan()
		ep, eerr := eager.Prescan()
		if lerr != nil || eerr != nil || !reflect.DeepEqual(lp, ep) {
			t.Errorf("%s: pre-scans differ (errors %v, %v)", name, lerr, eerr)
		}
		for n := 1; n <= ld.PageCount(); n++ {
			a, aerr := ld.PageText(n)
			b, berr := eager.PageText(n)
			if a != b || (aerr == nil) != (berr == nil) {
				t.Errorf("%s page %d: texts differ (%d and %d bytes; errors %v, %v)", name, n, len(a), len(b), aerr, berr)
				return
			}
		}
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name+".pdf"))
		if err != nil {
			t.Fatal(err)
		}
		check(name, data)
		conf := model.NewDefaultConfiguration()
		conf.WriteObjectStream, conf.WriteXRefStream = true, true
		var streams bytes.Buffer
		if err := api.Optimize(bytes.NewReader(data), &streams, conf); err != nil {
			continue // pdfcpu cannot rewrite it (encrypted, broken)
		}
		check(name+" (object streams)", streams.Bytes())
		if len(merge) < 3 {
			merge = append(merge, bytes.NewReader(data))
		}
	}
	var merged bytes.Buffer
	if err := api.MergeRaw(merge, &merged, false, model.NewDefaultConfiguration()); err != nil {
		t.Fatal(err)
	}
	check("merged", merged.Bytes())
	if lazy < docs*3/4 {
		t.Errorf("the lazy reader opened %d of %d PDFs", lazy, docs)
	}
	t.Logf("%d of %d PDFs read lazily", lazy, docs)
}

// TestObjectParserMatchesPdfcpu: every object of every corpus PDF (and of
// its rewrite with object streams) parses to the same value with our
// parser as with pdfcpu's.
func TestObjectParserMatchesPdfcpu(t *testing.T) {
	api.DisableConfigDir()
	dir, names := corpusFiles(t)
	objects := 0
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name+".pdf"))
		if err != nil {
			t.Fatal(err)
		}
		conf := model.NewDefaultConfiguration()
		conf.WriteObjectStream, conf.WriteXRefStream = true, true
		var streams bytes.Buffer
		variants := [][]byte{data}
		if api.Optimize(bytes.NewReader(data), &streams, conf) == nil {
			variants = append(variants, streams.Bytes())
		}
		for _, v := range variants {
			ours, err1 := openLazy(bytes.NewReader(v), int64(len(v)))
			theirs, err2 := openLazy(bytes.NewReader(v), int64(len(v)))
			if err1 != nil || err2 != nil {
				continue
			}
			theirs.pdfcpuParse = true
			for nr := range ours.xref {
				ref := types.IndirectRef{ObjectNumber: types.Integer(nr)}
				a, aerr := ours.Dereference(ref)
				b, berr := theirs.Dereference(ref)
				if (aerr == nil) != (berr == nil) || !reflect.DeepEqual(a, b) {
					t.Errorf("%s object %d: ours %v (%v), pdfcpu's %v (%v)", name, nr, a, aerr, b, berr)
				}
				objects++
			}
		}
	}
	t.Logf("%d objects", objects)
}

// TestObjectParserCases: objects written oddly parse as pdfcpu parses them
// (directly, or through pdfcpu where ours refuses).
func TestObjectParserCases(t *testing.T) {
	for _, in := range []string{
		"<< /Type /Page /Kids [1 0 R 2 0 R] /Count 2 >>",
		"<</A 1/B 2.5/C -.5/D +3/E(x\\)y)/F<ab c>/G true/H null/I false>>",
		"[1 2 R 3 0 RG 4]", "[1 0 R]", "[1 0]", "[1 +0 R]", "[1 0.5 R]", "5 %c\n0 R",
		"/Name#20With#2FHash", "/A{b}", "(a(b)c)", "(unbalanced", "<4142 434>", "<41 4>", "<zz>", "<>",
		"[/a/b]", "<< /K >>", "<<>>", "[ ]", "True", "nullx", "0+5", "1e5", "1,5", "12345678901234567890",
		"<< /Length 5 0 R >>stream", "[(a)(b)<c>]", "% comment\n<< /X 1 >>", "<< /Dup 1 /Dup 2 >>",
	} {
		ours, n1, err1 := parseObject([]byte(in))
		theirs, n2, err2 := pdfcpuParse([]byte(in))
		if err1 != nil {
			continue // pdfcpu's parser reads it in its place
		}
		if err2 != nil || !reflect.DeepEqual(ours, theirs) || n1 != n2 {
			t.Errorf("%q: ours %#v after %d bytes, pdfcpu's %#v after %d (%v)", in, ours, n1, theirs, n2, err2)
		}
	}
}

// objectsOnly writes the header and the objects of a PDF (objs[i] is
// object i+1) without a cross-reference; it returns their offsets.
func objectsOnly(objs ...string) ([]byte, []int) {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, expandStream(o))
	}
	return b.Bytes(), offsets
}

// xrefTable is a classic table for objects 0..len(offsets) (a negative
// offset is a free entry) with the trailer's extra entries.
func xrefTable(offsets []int, trailer string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		if off < 0 {
			b.WriteString("0000000000 65535 f \n")
			continue
		}
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R %s >>\n", len(offsets)+1, trailer)
	return b.String()
}

// pageObjs is a one-page document: catalog, page tree, page, content
// (with Helvetica as 5).
func pageObjs(text string) []string {
	return []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		"<< >> STREAM(BT /F1 12 Tf 72 700 Td (" + text + ") Tj ET)",
		helvetica,
	}
}

// TestLazyHostileXref: cross-references that loop, lie or overflow are
// bounded: the lazy reader refuses them with a clear error (and pdfcpu
// gets its chance) or reads around them; nothing hangs or panics.
func TestLazyHostileXref(t *testing.T) {
	body, offs := objectsOnly(pageObjs("hello lazy")...)
	at := len(body)
	withTail := func(tail string, startxref int) []byte {
		return append(append([]byte{}, body...), fmt.Sprintf("%sstartxref\n%d\n%%%%EOF\n", tail, startxref)...)
	}
	for _, c := range []struct {
		name string
		data []byte
		// refuse: the lazy reader's error contains it; "" means it opens
		// and reads page 1.
		refuse string
		// repaired: the objects were found by their headers.
		repaired bool
	}{
		{"a /Prev that points to its own section", withTail(xrefTable(offs, fmt.Sprintf("/Prev %d", at)), at), "loops back", false},
		{"two sections whose /Prev point at each other", func() []byte {
			first := xrefTable(offs, fmt.Sprintf("/Prev %010d", at+len(xrefTable(offs, "/Prev 0000000000"))))
			second := xrefTable(offs, fmt.Sprintf("/Prev %010d", at))
			return withTail(first+second, at+len(first))
		}(), "loops back", false},
		{"a startxref past the end of the file", withTail(xrefTable(offs, ""), 1<<40), "outside the file", false},
		{"a subsection claiming more entries than the file holds", withTail("xref\n0 99999999\n"+xrefTable(offs, "")[len("xref\n"):], at), "bad subsection", false},
		{"every object offset wrong: the objects are found by their headers", func() []byte {
			wrong := make([]int, len(offs))
			for i, o := range offs {
				wrong[i] = o + 7
			}
			return withTail(xrefTable(wrong, ""), at)
		}(), "", true},
		{"junk before the header: no startxref leads anywhere, pdfcpu's reader gets it", func() []byte {
			return append([]byte("junk junk junk\n"), withTail(xrefTable(offs, ""), at)...)
		}(), "no %PDF- header", false},
		{"an encrypted trailer goes to pdfcpu", withTail(xrefTable(offs, "/Encrypt << /Filter /Standard >>"), at), "encrypted", false},
		{"a /Root that is not a dictionary", func() []byte {
			return withTail(strings.Replace(xrefTable(offs, ""), "/Root 1 0 R", "/Root 4 0 R", 1), at)
		}(), "not a dictionary", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := openLazy(bytes.NewReader(c.data), int64(len(c.data)))
			if c.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), c.refuse) {
					t.Fatalf("lazy reader: got %v, want an error saying %q", err, c.refuse)
				}
				// Open still answers: pdfcpu's reader, or a clear error.
				if _, err := Open(bytes.NewReader(c.data)); err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrEncrypted) {
					t.Fatalf("Open: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("lazy reader: %v", err)
			}
			if f.repaired != c.repaired {
				t.Errorf("repaired %v, want %v", f.repaired, c.repaired)
			}
			d, err := openObjects(bytes.NewReader(c.data))
			if err != nil {
				t.Fatal(err)
			}
			if s, err := d.PageText(1); err != nil || words(s) != "hello lazy" {
				t.Fatalf("page 1: %q, %v", s, err)
			}
		})
	}
}

// xrefStreamObj is a cross-reference stream object (uncompressed, /W [1 4
// 1]) with the given entries and extra dictionary entries.
func xrefStreamObj(nr int, entries [][3]int, extra string) string {
	var data []byte
	for _, e := range entries {
		data = append(data, byte(e[0]), byte(e[1]>>24), byte(e[1]>>16), byte(e[1]>>8), byte(e[1]), byte(e[2]))
	}
	return fmt.Sprintf("%d 0 obj\n<< /Type /XRef /W [1 4 1] /Root 1 0 R %s /Length %d >>\nstream\n%s\nendstream\nendobj\n", nr, extra, len(data), data)
}

// TestLazyHostileStreams: cross-reference streams and object streams that
// overflow or refer to themselves, and stream lengths that lie.
func TestLazyHostileStreams(t *testing.T) {
	body, offs := objectsOnly(pageObjs("stream test")...)
	entries := [][3]int{{0, 0, 255}}
	for _, o := range offs {
		entries = append(entries, [3]int{1, o, 0})
	}
	withStream := func(extra string, ents [][3]int) []byte {
		at := len(body)
		return append(append([]byte{}, body...), fmt.Sprintf("%sstartxref\n%d\n%%%%EOF\n", xrefStreamObj(len(offs)+1, ents, extra), at)...)
	}
	t.Run("a valid cross-reference stream reads", func(t *testing.T) {
		data := withStream(fmt.Sprintf("/Size %d", len(offs)+2), entries)
		d, err := openObjects(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := d.PageText(1); words(s) != "stream test" {
			t.Fatalf("page 1: %q", s)
		}
	})
	for _, c := range []struct {
		name, extra, refuse string
		ents                [][3]int
	}{
		{"an /Index claiming two billion entries", "/Size 6 /Index [0 2147483647]", "bad /Index", entries},
		{"a negative /Index", "/Size 6 /Index [-5 6]", "bad /Index", entries},
		{"field widths over 8 bytes", "/Size 6 /W [1 40 1]", "/W", entries},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := withStream(c.extra, c.ents)
			if c.extra == "/Size 6 /W [1 40 1]" {
				data = bytes.Replace(data, []byte("/W [1 4 1] /Root 1 0 R /Size 6 /W [1 40 1]"), []byte("/W [1 40 1] /Root 1 0 R /Size 6"), 1)
			}
			_, err := openLazy(bytes.NewReader(data), int64(len(data)))
			if err == nil || !strings.Contains(err.Error(), c.refuse) {
				t.Fatalf("got %v, want an error saying %q", err, c.refuse)
			}
		})
	}
	t.Run("a few compressed bytes claiming three million entries", func(t *testing.T) {
		var z bytes.Buffer
		w, err := flateWriter(&z)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(make([]byte, 3_000_000)) // type 0 (free) entries, one byte each
		w.Close()
		at := len(body)
		data := append(append([]byte{}, body...), fmt.Sprintf("%d 0 obj\n<< /Type /XRef /W [1 0 0] /Size 3000000 /Root 1 0 R /Filter /FlateDecode /Length %d >>\nstream\n", len(offs)+1, z.Len())...)
		data = append(append(data, z.Bytes()...), fmt.Sprintf("\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)...)
		_, err = openLazy(bytes.NewReader(data), int64(len(data)))
		if !errors.Is(err, errTooManyEntries) {
			t.Fatalf("%d-byte file: got %v, want %v", len(data), err, errTooManyEntries)
		}
	})
	t.Run("an object stream listed inside itself is refused, its page reported unreadable", func(t *testing.T) {
		ents := append([][3]int{}, entries...)
		ents[4] = [3]int{2, 4, 0} // the content stream, "in" object stream 4
		data := withStream(fmt.Sprintf("/Size %d", len(offs)+2), ents)
		d, err := openObjects(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		pc, err := d.Page(1)
		if !errors.Is(err, ErrMalformed) || pc.Status != TextUnreadable || !strings.Contains(pc.Lost, "object stream inside an object stream") {
			t.Fatalf("page 1: %+v, %v; want it unreadable, saying why", pc, err)
		}
	})
	t.Run("a /Length that refers to its own stream is read up to endstream", func(t *testing.T) {
		objs := pageObjs("self length")
		objs[3] = "<< /Length 4 0 R >>\nstream\nBT /F1 12 Tf 72 700 Td (self length) Tj ET\nendstream"
		b, o := objectsOnly(objs...)
		data := append(b, fmt.Sprintf("%sstartxref\n%d\n%%%%EOF\n", xrefTable(o, ""), len(b))...)
		d, err := openObjects(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if s, err := d.PageText(1); err != nil || words(s) != "self length" {
			t.Fatalf("page 1: %q, %v", s, err)
		}
	})
	t.Run("a /Length past the end of the file is read up to endstream", func(t *testing.T) {
		objs := pageObjs("long length")
		objs[3] = "<< /Length 999999999 >>\nstream\nBT /F1 12 Tf 72 700 Td (long length) Tj ET\nendstream"
		b, o := objectsOnly(objs...)
		data := append(b, fmt.Sprintf("%sstartxref\n%d\n%%%%EOF\n", xrefTable(o, ""), len(b))...)
		d, err := openObjects(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if s, err := d.PageText(1); err != nil || words(s) != "long length" {
			t.Fatalf("page 1: %q, %v", s, err)
		}
	})
}

// TestLazyUpdates: an incremental update's objects replace the original
// ones; a hybrid file's /XRefStm finds what its table lists as free.
func TestLazyUpdates(t *testing.T) {
	body, offs := objectsOnly(pageObjs("first version")...)
	first := len(body)
	data := append(append([]byte{}, body...), fmt.Sprintf("%sstartxref\n%d\n%%%%EOF\n", xrefTable(offs, ""), first)...)
	// The update: a new content stream for object 4 and a section that
	// lists it alone, pointing back to the first.
	upd := len(data)
	content := "BT /F1 12 Tf 72 700 Td (second version) Tj ET"
	data = append(data, fmt.Sprintf("4 0 obj\n<< /Length %d >>\nstream\n%s\nendstream\nendobj\n", len(content), content)...)
	sec := len(data)
	data = append(data, fmt.Sprintf("xref\n0 1\n0000000000 65535 f \n4 1\n%010d 00000 n \ntrailer\n<< /Size 6 /Root 1 0 R /Prev %d >>\nstartxref\n%d\n%%%%EOF\n", upd, first, sec)...)
	d, err := openObjects(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := d.PageText(1); words(s) != "second version" {
		t.Errorf("updated page: %q", s)
	}

	// Hybrid: the table says object 4 is free, the /XRefStm stream says
	// where it is.
	hb := append([]byte{}, body...)
	xs := len(hb)
	hb = append(hb, xrefStreamObj(6, [][3]int{{1, offs[3], 0}}, "/Size 7 /Index [4 1]")...)
	tab := len(hb)
	hoffs := append([]int{}, offs...)
	hoffs[3] = -1
	hb = append(hb, fmt.Sprintf("%sstartxref\n%d\n%%%%EOF\n", xrefTable(hoffs, fmt.Sprintf("/XRefStm %d", xs)), tab)...)
	d, err = openObjects(bytes.NewReader(hb))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := d.PageText(1); words(s) != "first version" {
		t.Errorf("hybrid page: %q", s)
	}
}

// TestLazyHostileTrees: page trees and outlines that loop or lie about
// their size cost a bounded walk; each page and item is read once.
func TestLazyHostileTrees(t *testing.T) {
	objs := pageObjs("tree")
	open := func(t *testing.T, objs []string) *Document {
		t.Helper()
		b, o := objectsOnly(objs...)
		data := append(b, fmt.Sprintf("%sstartxref\n%d\n%%%%EOF\n", xrefTable(o, ""), len(b))...)
		d, err := openObjects(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Run("a page tree whose kids list the tree itself and the page twice", func(t *testing.T) {
		o := append([]string{}, objs...)
		o[1] = "<< /Type /Pages /Kids [3 0 R 2 0 R 3 0 R] /Count 3 >>"
		if d := open(t, o); d.PageCount() != 1 {
			t.Fatalf("%d pages", d.PageCount())
		}
	})
	t.Run("a /Count of two billion over one page", func(t *testing.T) {
		o := append([]string{}, objs...)
		o[1] = "<< /Type /Pages /Kids [3 0 R] /Count 2147483647 >>"
		d := open(t, o)
		ps, err := d.Prescan()
		if err != nil || d.PageCount() != 1 || len(ps.Pages) != 1 {
			t.Fatalf("%d pages, %d in the pre-scan, %v", d.PageCount(), len(ps.Pages), err)
		}
	})
	t.Run("an outline whose items loop through /Next and /First", func(t *testing.T) {
		o := append([]string{}, objs...)
		o[0] = "<< /Type /Catalog /Pages 2 0 R /Outlines 6 0 R >>"
		o = append(o,
			"<< /Type /Outlines /First 7 0 R /Count 2 >>",
			"<< /Title (One) /Dest [3 0 R /Fit] /Next 8 0 R /First 7 0 R >>",
			"<< /Title (Two) /Dest [3 0 R /Fit] /Next 7 0 R /First 6 0 R >>",
		)
		d := open(t, o)
		ps, err := d.Prescan()
		if err != nil {
			t.Fatal(err)
		}
		if len(ps.Outline) != 2 || ps.Outline[0].Title != "One" || ps.Outline[1].Title != "Two" || len(ps.Outline[0].Children) != 0 {
			t.Fatalf("outline %+v", ps.Outline)
		}
	})
	t.Run("arrays nested ten thousand deep", func(t *testing.T) {
		o := append([]string{}, objs...)
		o[2] = strings.Replace(o[2], "/MediaBox [0 0 612 792]", "/MediaBox [0 0 612 792] /Junk "+strings.Repeat("[", 10000)+strings.Repeat("]", 10000), 1)
		b, off := objectsOnly(o...)
		data := append(b, fmt.Sprintf("%sstartxref\n%d\n%%%%EOF\n", xrefTable(off, ""), len(b))...)
		d, err := Open(bytes.NewReader(data))
		if err == nil {
			_, err = d.Prescan()
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("got %v, want a document or ErrMalformed", err)
		}
	})
}

// TestLazySearchBudget: streams whose /Length lies and that never end make
// the reader search the file for their end; the searches together stop
// at a budget of a few times the file's size, and the streams past it are
// refused (null, as a missing object is) instead of costing a read of the
// file each.
func TestLazySearchBudget(t *testing.T) {
	const pages = 200
	kids := make([]string, pages)
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 3+i)
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R >>", 3+pages+i))
	}
	objs[1] = "<< /Type /Pages /Kids [" + strings.Join(kids, " ") + fmt.Sprintf("] /Count %d >>", pages)
	body, offs := objectsOnly(objs...)
	for i := range pages {
		offs = append(offs, len(body))
		body = append(body, fmt.Sprintf("%d 0 obj\n<< /Length 99999999 >>\nstream\nBT ET\n", 3+pages+i)...)
	}
	body = append(body, "%"+strings.Repeat("x", 1<<20)+"\n"...)
	data := append(body, fmt.Sprintf("%sstartxref\n%d\n%%%%EOF\n", xrefTable(offs, ""), len(body))...)
	d, err := openObjects(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := d.Prescan()
	if err != nil {
		t.Fatal(err)
	}
	f := d.xref.(*lazyFile)
	if budget := 4*f.size + maxObjectBytes; f.searched > budget || f.searched < budget-2<<20 {
		t.Errorf("searched %d bytes, want the budget, %d", f.searched, budget)
	}
	refused := 0
	for n := 3 + pages; n < 3+2*pages; n++ {
		if _, err := f.Dereference(types.IndirectRef{ObjectNumber: types.Integer(n)}); err != nil && errors.Is(err, errSearchBudget) {
			refused++
		}
	}
	if refused == 0 || refused == pages || len(ps.Pages) != pages {
		t.Errorf("%d of %d content streams refused by the search budget, %d pages; want the later ones only", refused, pages, len(ps.Pages))
	}
	t.Logf("%d of %d content streams past the budget after %d bytes searched in a %d-byte file", refused, pages, f.searched, len(data))
}

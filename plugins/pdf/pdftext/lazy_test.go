package pdftext

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
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
		eager, eerr := openContext(bytes.NewReader(data))
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

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

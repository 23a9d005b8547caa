package extract

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestPPTHiddenSlidesAndStructure: a hidden slide of a real presentation
// is marked like PPTX's (object metadata and slide list), notes are
// counted, and the index says the format.
func TestPPTHiddenSlidesAndStructure(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "office", "ppt", "lo-glacier-deck.ppt"), "deck.ppt", "", Limits{})
	if idx.Structure["format"] != "ppt" || idx.Structure["slides"] != 3 || idx.Structure["notes"] != 1 {
		t.Errorf("structure %v", idx.Structure)
	}
	for _, o := range objs {
		hidden := o.Metadata["hidden"] == true
		if want := o.Ref.SlideIndex == 3; hidden != want {
			t.Errorf("slide %d object %q: hidden %v, want %v", o.Ref.SlideIndex, o.Data, hidden, want)
		}
	}
	list, _ := idx.Structure["slideList"].([]map[string]any)
	if len(list) != 3 || list[2]["hidden"] != true || list[0]["notes"] != "notes1" {
		t.Errorf("slide list %v", list)
	}
	// The master's placeholder prompts are not slide text.
	for _, o := range objs {
		if strings.Contains(o.Data, "Click to edit") {
			t.Errorf("master text in %s: %q", o.Ref.Location, o.Data)
		}
	}
}

// pptPatched is the real presentation with a change to its streams' bytes
// where a pattern occurs (the compound file may hold a stale copy of a
// stream too).
func pptPatched(t *testing.T, find []byte, at int, put []byte) []byte {
	t.Helper()
	b := bytes.Clone(testcorpus.Read(t, "office", "ppt", "mscfb-test.ppt"))
	if !bytes.Contains(b, find) {
		t.Fatalf("pattern %x not found", find)
	}
	for i := 0; ; {
		k := bytes.Index(b[i:], find)
		if k < 0 {
			return b
		}
		copy(b[i+k+at:], put)
		i += k + len(find)
	}
}

// TestPPTRefusals: an encrypted, a broken or a looping presentation is
// refused by an error that names the format and the reason, never read as
// an empty or garbled success; a cut one likewise.
func TestPPTRefusals(t *testing.T) {
	le := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	token := le(pptTokenPlain)
	// The current user atom: header, size, token, offset to the current edit.
	cur := bytes.Index(testcorpus.Read(t, "office", "ppt", "mscfb-test.ppt"), token)
	if cur < 0 {
		t.Fatal("no current user atom")
	}
	editOff := binary.LittleEndian.Uint32(testcorpus.Read(t, "office", "ppt", "mscfb-test.ppt")[cur+4:])
	// The user edit atom: header, lastSlideIdRef, version, then offsetLastEdit.
	ueHead := []byte{0, 0, 0xF5, 0x0F}
	for _, c := range []struct {
		name string
		data []byte
		want error
		says string
	}{
		{"encrypted", pptPatched(t, token, 0, le(pptTokenEncrypted)), ErrEncrypted, "password-protected PowerPoint 97-2003"},
		{"foreign token", pptPatched(t, token, 0, le(0x12345678)), ErrMalformed, "not PowerPoint 97-2003's"},
		{"edit outside the stream", pptPatched(t, token, 4, le(0x7FFFFF00)), ErrMalformed, "no PowerPoint user edit"},
		{"edit chain loops", pptPatched(t, ueHead, 16, le(editOff)), ErrMalformed, "edit chain loops"},
	} {
		t.Run(c.name, func(t *testing.T) {
			idx, objs, err := run(t, c.data, "talk.ppt", "", Limits{})
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err %v (index %v, %d objects), want %v saying %q", err, idx.Structure, len(objs), c.want, c.says)
			}
		})
	}
	b := testcorpus.Read(t, "office", "ppt", "lo-glacier-deck.ppt")
	for i := 1; i < 8; i++ {
		_, objs, err := run(t, b[:len(b)*i/8], "cut.ppt", "", Limits{})
		if err == nil && len(objs) > 0 {
			t.Errorf("cut at %d/8: %d objects, no error", i, len(objs))
		}
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Errorf("cut at %d/8: %v", i, err)
		}
	}
}

// TestPPTTextLimit: the text limit cuts a presentation's output and says so.
func TestPPTTextLimit(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "office", "ppt", "mscfb-test.ppt"), "t.ppt", "", Limits{MaxTextBytes: 100})
	n := 0
	for _, o := range objs {
		n += len(o.Data)
	}
	if n > 100 || idx.Structure["truncated"] == nil {
		t.Errorf("%d bytes of text, structure %v", n, idx.Structure)
	}
}

// pptRecord builds one record of the PowerPoint binary format.
func pptRecord(ver, inst, typ uint16, data ...[]byte) []byte {
	body := bytes.Join(data, nil)
	b := binary.LittleEndian.AppendUint16(nil, ver|inst<<4)
	b = binary.LittleEndian.AppendUint16(b, typ)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
	return append(b, body...)
}

// pptStreams builds the two streams of a presentation whose slide list
// names persist id 2 n times (slide ids 256…), persist id 2 being one
// slide with the given body.
func pptStreams(n int, slideBody []byte) (doc, cur []byte) {
	le := func(vs ...uint32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		return b
	}
	var list [][]byte
	for i := range n {
		list = append(list, pptRecord(0, 0, pptSlidePersist, le(2, 0, 0, uint32(256+i), 0)))
	}
	dc := pptRecord(0xF, 0, pptDocument, pptRecord(0xF, 0, pptSlideList, list...))
	sc := pptRecord(0xF, 0, pptSlide, slideBody)
	pdOff := len(dc) + len(sc)
	pd := pptRecord(0, 0, pptPersistDir, le(2<<20|1, 0, uint32(len(dc))))
	ue := pptRecord(0, 0, pptUserEdit, le(0, 3<<24, 0, uint32(pdOff), 1, 3, 1))
	doc = bytes.Join([][]byte{dc, sc, pd, ue}, nil)
	cur = pptRecord(0, 0, pptCurrentUserAtom, le(0x14, pptTokenPlain, uint32(pdOff+len(pd)), 0, 0))
	return doc, cur
}

func utf16Bytes(s string) []byte {
	var b []byte
	for _, r := range s {
		b = binary.LittleEndian.AppendUint16(b, uint16(r))
	}
	return b
}

// TestPPTHostileStructure: a slide list that names one slide 200,000 times
// reads it once (the others are reported, the report bounded); containers
// nested 100,000 deep are followed only so far; a slide list whose slides
// are nowhere is an error, not an empty success.
func TestPPTHostileStructure(t *testing.T) {
	text := pptRecord(0xF, 0, 0xF00D, pptRecord(0, 0, pptTextHeader, []byte{0, 0, 0, 0}), pptRecord(0, 0, pptTextChars, utf16Bytes("Only once")))
	doc, cur := pptStreams(200_000, text)
	s := newSink(t.Context(), DefaultLimits())
	if err := pptSlides(t.Context(), doc, cur, s); err != nil {
		t.Fatal(err)
	}
	if len(s.objs) != 1 || s.objs[0].Data != "Only once" || s.objs[0].Ref.Label != "Only once" {
		t.Fatalf("objects %q", texts(s.objs))
	}
	if sk, _ := s.structure["skipped"].([]string); len(sk) != 100 || s.structure["skippedMore"] != 200_000-1-100 {
		t.Errorf("skipped %d listed, %v more", len(sk), s.structure["skippedMore"])
	}

	inner := pptRecord(0, 0, pptTextChars, utf16Bytes("too deep"))
	const depth = 100_000
	var deep []byte
	for i := range depth { // headers outermost first, each body the rest
		deep = binary.LittleEndian.AppendUint16(deep, 0xF)
		deep = binary.LittleEndian.AppendUint16(deep, 0xF003)
		deep = binary.LittleEndian.AppendUint32(deep, uint32(len(inner)+8*(depth-1-i)))
	}
	deep = append(deep, inner...)
	doc, cur = pptStreams(1, append(bytes.Clone(text), deep...))
	s = newSink(t.Context(), DefaultLimits())
	if err := pptSlides(t.Context(), doc, cur, s); err != nil {
		t.Fatal(err)
	}
	if len(s.objs) != 1 || strings.Contains(s.objs[0].Data, "too deep") {
		t.Errorf("objects %q", texts(s.objs))
	}

	doc, cur = pptStreams(3, text)
	// The directory keeps the document (id 1) and loses the slide (id 2).
	binary.LittleEndian.PutUint32(doc[bytes.Index(doc, []byte{0, 0, 0x72, 0x17})+8:], 1<<20|1)
	err := pptSlides(t.Context(), doc, cur, newSink(t.Context(), DefaultLimits()))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "none of the 3 slides") {
		t.Errorf("slides nowhere: %v", err)
	}
}

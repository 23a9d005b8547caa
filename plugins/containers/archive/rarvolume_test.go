package archive

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestRarVolumes: one volume of a multi-volume RAR set (each upload is its
// own input) gives the files wholly in it, refuses the file that continues
// in the next volume, and reports the stop as a missing volume, never as a
// corrupt archive; a later volume is refused whole with its number.
func TestRarVolumes(t *testing.T) {
	cases := []struct {
		file  string
		files map[string]string // read whole
		split string            // the entry that continues in the next volume
		stop  string            // in the stop's reason
	}{
		{file: "libarchive-rar4-volume.part1.rar", split: "LibarchiveAddingTest.html",
			stop: "volume 1 of a multi-volume RAR archive ends after 1 entries"},
		{file: "libarchive-rar4-volume.part2.rar",
			stop: "a later volume of a multi-volume RAR archive: a set is read from its first volume"},
		{file: "libarchive-rar5-solid-volume.part01.rar",
			files: map[string]string{"cebula.txt": "", "test.bin": "", "test1.bin": "", "test6.bin": ""},
			split: "elf-Linux-ARMv7-ls",
			stop:  "volume 1 of a multi-volume RAR archive ends after 9 entries"},
		{file: "libarchive-rar5-solid-volume.part02.rar",
			stop: "volume 2 of a multi-volume RAR archive: a set is read from its first volume"},
		{file: "libarchive-rar5-volume.part01.rar", split: "home/antek/temp/build/unrar5/libarchive/bin/bsdcat_test",
			stop: "volume 1 of a multi-volume RAR archive ends after 1 entries"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(testcorpus.Path(t, "archives", "formats", c.file))
			if err != nil {
				t.Fatal(err)
			}
			read := map[string]int{}
			res, err := Walk(context.Background(), bytes.NewReader(b), int64(len(b)), filepath.Base(c.file), Limits{}, func(e Entry, r io.Reader) error {
				if r != nil && e.Depth > 0 {
					d, _ := io.ReadAll(r)
					read[strings.TrimPrefix(e.Path, c.file+"/")] = len(d)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Truncated || len(res.Stops) != 1 || !strings.Contains(res.Stops[0].Reason, c.stop) {
				t.Fatalf("truncated %v, stops %+v; want one stop saying %q", res.Truncated, res.Stops, c.stop)
			}
			for _, p := range res.Problems {
				if p.Kind == ProblemCorrupt {
					t.Errorf("a volume reported as corrupt: %+v", p)
				}
			}
			for p := range c.files {
				e, ok := entryByPath(res, c.file+"/"+p)
				if !ok || read[p] != int(e.Size) || e.Size == 0 {
					t.Errorf("%s: read %d bytes of %d (listed %v)", p, read[p], e.Size, ok)
				}
			}
			if c.split != "" {
				// Listed before its bytes ran out, like any entry whose read fails.
				pr, ok := problemAt(res, c.file+"/"+c.split)
				if !ok || pr.Kind != ProblemUnsupported || !strings.Contains(pr.Reason, "continues in a volume that is not here") {
					t.Errorf("split entry %s: problem %+v (%v)", c.split, pr, ok)
				}
			} else if len(res.Entries) != 1 {
				t.Errorf("a later volume gave entries: %v", paths(res))
			}
		})
	}
}

// TestSniffRarVolume: the volume flags are read from the headers, and bytes
// that are not a RAR main header (a self-extractor's stub, a short file,
// an overlong number) say nothing rather than something wrong.
func TestSniffRarVolume(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		want rarVolume
	}{
		{"rar4 single", []byte("Rar!\x1a\x07\x00\xcf\x90\x73\x00\x00\x0d\x00"), rarVolume{}},
		{"rar4 first", []byte("Rar!\x1a\x07\x00\x5a\x6e\x73\x11\x01\x0d\x00"), rarVolume{multi: true, number: 1}},
		{"rar4 later", []byte("Rar!\x1a\x07\x00\x19\x7a\x73\x11\x00\x0d\x00"), rarVolume{multi: true, later: true}},
		{"rar4 old, first entry split before", append([]byte("Rar!\x1a\x07\x00\x00\x00\x73\x01\x00\x07\x00"), "\x00\x00\x74\x01\x00\x07\x00"...), rarVolume{multi: true, later: true}},
		{"rar4 old, first entry whole", append([]byte("Rar!\x1a\x07\x00\x00\x00\x73\x01\x00\x07\x00"), "\x00\x00\x74\x00\x00\x07\x00"...), rarVolume{multi: true}},
		{"rar4 short", []byte("Rar!\x1a\x07\x00\x5a\x6e\x73"), rarVolume{}},
		{"rar5 first", []byte("Rar!\x1a\x07\x01\x00\x55\x00\x41\xcf\x0c\x01\x05\x08\x01"), rarVolume{multi: true, number: 1}},
		{"rar5 third", []byte("Rar!\x1a\x07\x01\x00\x33\x04\x65\xb4\x0d\x01\x05\x08\x03\x02"), rarVolume{multi: true, later: true, number: 3}},
		{"rar5 single", []byte("Rar!\x1a\x07\x01\x00\x00\x00\x00\x00\x05\x01\x00\x00"), rarVolume{}},
		{"rar5 encrypted headers", []byte("Rar!\x1a\x07\x01\x00\x00\x00\x00\x00\x05\x04\x00\x00"), rarVolume{}},
		{"rar5 number cut", []byte("Rar!\x1a\x07\x01\x00\x00\x00\x00\x00\x0d\x01\x00\x03\x80"), rarVolume{multi: true}},
		{"rar5 number huge", []byte("Rar!\x1a\x07\x01\x00\x00\x00\x00\x00\x0d\x01\x00\x03\xff\xff\xff\xff\x0f"), rarVolume{multi: true}},
		{"sfx stub", append([]byte("MZ\x90\x00"), "Rar!\x1a\x07\x00"...), rarVolume{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sniffRarVolume(c.b); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

package archive

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/plugins/containers/archive/archivetest"
)

// walked is what a Walk that reads every file's bytes saw.
type walked struct {
	res    Result
	err    error
	files  map[string][]byte // path → bytes read, for files read without error
	failed map[string]error  // path → the read error
	over   []string          // files whose reader gave more bytes than Entry.Size
}

// walkAll walks b as a consumer that announced each file's size would:
// it reads every file to its end and notes a reader that gives more.
func walkAll(t *testing.T, b []byte, name string, lim Limits) walked {
	t.Helper()
	w := walked{files: map[string][]byte{}, failed: map[string]error{}}
	w.res, w.err = Walk(context.Background(), bytes.NewReader(b), int64(len(b)), name, lim, func(e Entry, r io.Reader) error {
		if r == nil || e.Depth == 0 {
			return nil
		}
		data, err := io.ReadAll(r)
		if int64(len(data)) > e.Size {
			w.over = append(w.over, e.Path)
		}
		if err != nil {
			w.failed[e.Path] = err
			return err // passed on, as a careless callback would
		}
		w.files[e.Path] = data
		return nil
	})
	return w
}

// onePerPath fails when a path is reported twice, or both read and failed.
func onePerPath(t *testing.T, w walked) {
	t.Helper()
	seen := map[string]int{}
	for _, p := range w.res.Problems {
		seen[p.Path]++
		if seen[p.Path] == 2 {
			t.Errorf("%s reported failed twice: %v", p.Path, w.res.Problems)
		}
		if _, ok := w.files[p.Path]; ok {
			t.Errorf("%s read whole and reported failed: %v", p.Path, p)
		}
	}
}

// TestZipBadEntryGoesOn: every per-entry failure of a zip (data longer
// than declared, CRC, unsupported method, corrupt or cut deflate) refuses
// that entry once, with its reason, and the walk reads the entries after
// it; no reader ever gives a byte past the size the entry declared.
func TestZipBadEntryGoesOn(t *testing.T) {
	for _, tc := range archivetest.BadZipCases() {
		t.Run(tc.Name, func(t *testing.T) {
			z := archivetest.BadZip(tc.Entry)
			w := walkAll(t, z, "bad.zip", Limits{})
			if w.err != nil {
				t.Fatalf("Walk: %v", w.err)
			}
			if len(w.over) > 0 {
				t.Errorf("readers gave more than the declared size: %v", w.over)
			}
			bad := "bad.zip/" + tc.Entry.Name
			var got []Problem
			for _, p := range w.res.Problems {
				if p.Path == bad {
					got = append(got, p)
				}
			}
			if len(got) != 1 || !slices.Contains(tc.Kinds, got[0].Kind) || got[0].Reason == "" {
				t.Fatalf("problems of %s: %v, want one of kind %v", bad, got, tc.Kinds)
			}
			t.Logf("%v", got[0])
			if _, ok := w.files[bad]; ok {
				t.Errorf("%s read as good", bad)
			}
			for _, a := range archivetest.After {
				if got := string(w.files["bad.zip/"+a[0]]); got != a[1] {
					t.Errorf("%s after the bad entry: %q", a[0], got)
				}
			}
			if w.res.Truncated || len(w.res.Stops) != 0 {
				t.Errorf("one bad entry stopped the walk: %v", w.res.Stops)
			}
			onePerPath(t, w)
		})
	}
}

// TestStopsReported: every walk that stops early says so — Truncated, and
// a Stop naming the container, the limit (or the damage) and the entry —
// and never reports one entry twice.
func TestStopsReported(t *testing.T) {
	tiny := archivetest.TinyTar(12_000)
	// 2 MiB of noise first, so the overall ratio (by declared sizes) lets
	// the zeros through and the stream's meter stops them while read.
	ratio := archivetest.Gzip(buildTar(t, reg("noise.bin", randomBytes(2<<20, 3)), reg("zeros.bin", make([]byte, 4<<20)), reg("after.txt", []byte("after"))))
	cutTar := buildTar(t, reg("a.bin", randomBytes(40_000, 1)), reg("b.bin", randomBytes(40_000, 2)))
	cutTGZ := archivetest.Gzip(cutTar)
	cutZip := archivetest.BadZip()
	cutZip = cutZip[:bytes.Index(cutZip, []byte("PK\x01\x02"))]
	for _, tc := range []struct {
		name  string
		data  []byte
		lim   Limits
		files int // files read whole
		stop  Stop
	}{
		{"tgz of 12,000 tiny entries stops at the entry limit", archivetest.Gzip(tiny), Limits{}, 10_000,
			Stop{Container: "in.tgz", At: "in.tgz/" + archivetest.TinyName(10_000), Index: 10_000, Kind: ProblemLimit, Limit: LimitFiles, Walk: true}},
		{"tar of 12,000 tiny entries stops at the entry limit", tiny, Limits{}, 10_000,
			Stop{Container: "in.tar", At: "in.tar/" + archivetest.TinyName(10_000), Index: 10_000, Kind: ProblemLimit, Limit: LimitFiles, Walk: true}},
		{"tgz stream over the ratio while a member is read", ratio, Limits{RatioFloor: 1 << 20}, 1,
			Stop{Container: "in.tgz", At: "in.tgz/zeros.bin", Index: 2, Kind: ProblemBomb, Limit: LimitRatio}},
		{"truncated tgz", cutTGZ[:len(cutTGZ)*3/4], Limits{}, 1,
			Stop{Container: "in.tgz", At: "in.tgz/b.bin", Index: 2, Kind: ProblemTruncated}},
		{"truncated tar", cutTar[:60_000], Limits{}, 1,
			Stop{Container: "in.tar", At: "in.tar/b.bin", Index: 2, Kind: ProblemTruncated}},
		{"zip without its central directory", cutZip, Limits{}, 2,
			Stop{Container: "in.zip", At: "in.zip/" + archivetest.After[1][0], Index: 2, Kind: ProblemTruncated}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var name string
			switch {
			case strings.HasPrefix(tc.name, "tgz"), strings.HasPrefix(tc.name, "truncated tgz"):
				name = "in.tgz"
			case strings.HasPrefix(tc.name, "zip"):
				name = "in.zip"
			default:
				name = "in.tar"
			}
			w := walkAll(t, tc.data, name, tc.lim)
			if w.err != nil {
				t.Fatalf("Walk: %v", w.err)
			}
			if len(w.files) != tc.files {
				t.Errorf("%d files read whole, want %d", len(w.files), tc.files)
			}
			if !w.res.Truncated || len(w.res.Stops) != 1 {
				t.Fatalf("truncated %v, stops %v; problems %v", w.res.Truncated, w.res.Stops, lastProblems(w.res))
			}
			got := w.res.Stops[0]
			t.Logf("%v", got)
			reason := got.Reason
			got.Reason = ""
			if got != tc.stop || reason == "" {
				t.Errorf("stop %+v (%q),\nwant %+v", got, reason, tc.stop)
			}
			onePerPath(t, w)
		})
	}
}

func lastProblems(res Result) string {
	ps := res.Problems[max(0, len(res.Problems)-3):]
	return fmt.Sprint(len(res.Problems), " ", ps)
}

package extract

import (
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestSVGText: an SVG drawing's words are read (go-chart's donut chart:
// its labels in <text>; a plan with a title and a <tspan>), its markup and
// path data are not; a file that is not an SVG is refused. Before, the
// built-in extractors declared no SVG type and the host refused .svg.
func TestSVGText(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "images", "go-chart-donut.svg"), "donut.svg", "image/svg+xml", Limits{})
	all := strings.Join(texts(objs), "\n")
	if all != "Blue\nTwo\nOne" || idx.MIMEType != mimeSVG || idx.Structure["width"] != "512" {
		t.Errorf("donut: %q, %s %v", all, idx.MIMEType, idx.Structure)
	}
	plan := `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><title>Evacuation plan</title>` +
		`<style>text { font: 12px sans-serif }</style><path d="M 0 0 L 10 10"/>` +
		`<text x="20" y="40">Assembly point: <tspan font-weight="bold">car park B</tspan></text></svg>`
	idx, objs = mustRun(t, []byte(plan), "plan.svg", "", Limits{})
	if all := strings.Join(texts(objs), "\n"); all != "Evacuation plan\nAssembly point: car park B" || idx.Structure["title"] != "Evacuation plan" {
		t.Errorf("plan: %q %v", all, idx.Structure)
	}
	if _, _, err := run(t, []byte(`<html><body>not a drawing</body></html>`), "fake.svg", "image/svg+xml", Limits{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("an HTML page named .svg: %v", err)
	}
}

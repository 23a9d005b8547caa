package extract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/pdk/content"
)

// TestODPMasterPagesAndObjects: a LibreOffice presentation
// (lo-survey-master-chart.odp, saved from the flat source beside it) whose
// master page carries text of its own, whose slides show a footer
// declared in content.xml (<presentation:footer-decl>, named by a page's
// presentation:use-footer-name, OpenDocument 1.3 part 3) and whose slides
// embed sub-documents (<draw:object xlink:href="./Object 1">: a chart and
// a text document, each a folder of the package with its own
// content.xml). The slides hold the objects' text, the chart
// as titles, axis titles and series by name; the master page is an
// object of its own.
func TestODPMasterPagesAndObjects(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "office", "odp", "lo-survey-master-chart.odp"), "survey.odp", "", Limits{})
	byLoc := map[string]content.Object{}
	for _, o := range objs {
		byLoc[o.Ref.Location] = o
	}
	for loc, wants := range map[string][]string{
		"slide:1": {"Glacier length change",
			"Chart: Retreat per decade / metres, Rhône and Aletsch / Decade / Length change (m)",
			"Rhône glacier: 1990s = -112; 2000s = -154; 2010s = -198",
			"Aletsch glacier: 1990s = -210; 2000s = -380; 2010s = -495",
			"Field survey 2026 — confidential"},
		"slide:2":       {"Stations list", "Embedded text document: Jungfraujoch and Weissfluhjoch stations.", "Field survey 2026 — confidential"},
		"master:Survey": {"Swiss Glacier Monitoring Network — internal"},
	} {
		o, ok := byLoc[loc]
		if !ok {
			t.Errorf("no object at %s in %q", loc, texts(objs))
			continue
		}
		for _, w := range wants {
			if !strings.Contains(o.Data, w) {
				t.Errorf("%s: no %q in\n%s", loc, w, o.Data)
			}
		}
	}
	if o := byLoc["master:Survey"]; o.Ref.Part != "master" || o.Ref.Label != "Survey" || strings.Contains(o.Data, "Field survey") {
		t.Errorf("master object %+v %q", o.Ref, o.Data)
	}
	if idx.Structure["slides"] != 2 {
		t.Errorf("structure %v", idx.Structure)
	}
}

// TestODFObjectsHostile: an embedded object that embeds itself stops at
// maxODFObjectDepth levels; one whose content.xml embeds itself many
// times over (64^3 reads unbounded) stops at maxODFObjects; objects that
// point out of the package or to a missing folder are skipped by name;
// the slide's own text stays.
func TestODFObjectsHostile(t *testing.T) {
	const nsDraw = ` xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:xlink="http://www.w3.org/1999/xlink"`
	obj := func(href string, n int) string {
		return strings.Repeat(`<draw:frame><draw:object xlink:href="`+href+`"/></draw:frame>`, n)
	}
	self := func(n int) string {
		return `<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"` + nsDraw +
			`><office:body><office:text><text:p>self</text:p>` + obj("./Object 1", n) + `</office:text></office:body></office:document-content>`
	}
	// odp embeds "Object 1" in the slide, "Object 1/Object 1" in that
	// one, and so on for levels folders: each holding objects.
	odp := func(body, objects string, levels int) []byte {
		var extra []entry
		dir := ""
		for i := 0; i < levels; i++ {
			dir += "Object 1/"
			extra = append(extra, entry{name: dir + "content.xml", body: objects})
		}
		return odfOf(t, mimeODP, "", `<office:presentation><draw:page draw:name="p1"`+nsDraw+`><draw:frame><draw:text-box><text:p>own text</text:p></draw:text-box></draw:frame>`+body+`</draw:page></office:presentation>`, extra...)
	}
	for _, c := range []struct {
		name, body, object, skipped string
		levels, selfs               int
	}{
		{"depth", obj("./Object 1", 1), self(1), "nested deeper than 3 levels", 6, 3},
		{"fan-out", obj("./Object 1", 64), self(64), "more than 256 embedded objects", 3, 256},
		{"outside and missing", obj("../escape", 1) + obj("http://example.org/x", 1) + obj("./Object 9", 1), "", "Object 9", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			idx, objs := mustRun(t, odp(c.body, c.object, c.levels), "h.odp", "", Limits{})
			got := strings.Join(texts(objs), "\n")
			if !strings.HasPrefix(got, "own text") || strings.Count(got, "self") != c.selfs {
				t.Errorf("%d times self in %.200q", strings.Count(got, "self"), got)
			}
			if !strings.Contains(fmt.Sprint(idx.Structure["skipped"]), c.skipped) {
				t.Errorf("skipped %.300v", idx.Structure["skipped"])
			}
		})
	}
}

// TestODPNestedObjects: an object's own objects are in its folder
// ("Object 1/Object 1/content.xml"): lo-ole-objects.odp embeds a
// spreadsheet whose sheet carries a chart (table:shapes) over the cells
// the chart's series name ('Mass balance'.B2:'Mass balance'.B4, a table
// name with a space).
func TestODPNestedObjects(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "office", "odp", "lo-ole-objects.odp"), "ole.odp", "", Limits{})
	got := strings.Join(texts(objs), "\n")
	for _, want := range []string{
		"Chart: Mass balance chart / metres, Rhône and Aletsch / Decade / Length change (m)\n" +
			"Rhône glacier: 1990s = -112; 2000s = -154; 2010s = -198\nAletsch glacier: 1990s = -210; 2000s = -380; 2010s = -495",
		"| 2010s | -198 | -495 |",
		"Embedded text document: Jungfraujoch and Weissfluhjoch stations.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if idx.Structure["objects"] != 3 {
		t.Errorf("structure %v", idx.Structure)
	}
}

// TestODSSheetChart: a spreadsheet's chart (lo-sheet-chart.ods: a chart
// object in the sheet's table:shapes) is an object of its sheet; its
// series name the sheet's cells ('Mass balance'.B2:'Mass balance'.B4,
// the plot area a list of two ranges), which its own table copies a
// series per column, names in the first row, categories in the first
// column.
func TestODSSheetChart(t *testing.T) {
	idx, objs := mustRun(t, testcorpus.Read(t, "office", "embedded", "lo-sheet-chart.ods"), "chart.ods", "", Limits{})
	want := "Chart: Mass balance chart / metres, Rhône and Aletsch / Decade / Length change (m)\n" +
		"Rhône glacier: 1990s = -112; 2000s = -154; 2010s = -198\nAletsch glacier: 1990s = -210; 2000s = -380; 2010s = -495"
	if len(objs) != 2 || objs[0].Data != want || objs[0].Ref.SheetName != "Mass balance" || objs[0].Ref.Location != "sheet:Mass balance" {
		t.Fatalf("objects %q, want first\n%s", texts(objs), want)
	}
	if !strings.Contains(objs[1].Data, "| 4 | 2010s | -198 | -495 |") || idx.Structure["objects"] != 1 {
		t.Errorf("cells %q, structure %v", objs[1].Data, idx.Structure)
	}
}

package extract

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/pdk/content"
)

func shape(ph, text string) string {
	nv := `<p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr>`
	if ph != "" {
		nv = `<p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr><p:ph type="` + ph + `"/></p:nvPr></p:nvSpPr>`
	}
	var paras strings.Builder
	for _, p := range strings.Split(text, "\n") {
		paras.WriteString(`<a:p><a:r><a:rPr lang="en-US"/><a:t>` + p + `</a:t></a:r></a:p>`)
	}
	return `<p:sp>` + nv + `<p:spPr/><p:txBody><a:bodyPr/>` + paras.String() + `</p:txBody></p:sp>`
}

func slide(attrs, tree string) string {
	return `<?xml version="1.0"?><p:sld ` + nsA + ` ` + nsR + ` ` + nsP + ` ` + nsMC + attrs + `><p:cSld><p:spTree><p:nvGrpSpPr/><p:grpSpPr/>` + tree + `</p:spTree></p:cSld></p:sld>`
}

// TestPPTXOrder: slides come in sldIdLst order, not file order; notes,
// pictures and media carry their slide's index.
func TestPPTXOrder(t *testing.T) {
	pres := `<?xml version="1.0"?><p:presentation ` + nsR + ` ` + nsP + `><p:sldIdLst><p:sldId id="256" r:id="rId3"/><p:sldId id="257" r:id="rId2"/></p:sldIdLst><p:sldSz cx="12192000" cy="6858000"/></p:presentation>`
	pic := `<p:pic><p:nvPicPr><p:cNvPr id="4" name="Picture" descr="Logo"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:embed="rId2"/></p:blipFill><p:spPr/></p:pic>`
	video := `<p:pic><p:nvPicPr><p:cNvPr id="5" name="Clip"/><p:cNvPicPr/><p:nvPr><a:videoFile r:link="rId3"/></p:nvPr></p:nvPicPr><p:blipFill><a:blip r:embed="rId2"/></p:blipFill><p:spPr/></p:pic>`
	table := `<p:graphicFrame><p:nvGraphicFramePr/><p:xfrm/><a:graphic><a:graphicData><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>k</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>v</a:t></a:r></a:p></a:txBody></a:tc></a:tr>` +
		`<a:tr><a:tc><a:txBody><a:p><a:r><a:t>1</a:t></a:r></a:p></a:txBody></a:tc><a:tc hMerge="1"><a:txBody><a:p><a:r><a:t>dup</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>`
	chartFrame := `<p:graphicFrame><p:nvGraphicFramePr/><p:xfrm/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" r:id="rId4"/></a:graphicData></a:graphic></p:graphicFrame>`
	chart := `<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" ` + nsA + `><c:chart><c:title><c:tx><c:rich><a:p><a:r><a:t>Revenue</a:t></a:r></a:p></c:rich></c:tx></c:title><c:plotArea><c:barChart>` +
		`<c:ser><c:tx><c:strRef><c:f>B1</c:f><c:strCache><c:pt idx="0"><c:v>2024</c:v></c:pt></c:strCache></c:strRef></c:tx>` +
		`<c:cat><c:strRef><c:strCache><c:pt idx="0"><c:v>Q1</c:v></c:pt><c:pt idx="1"><c:v>Q2</c:v></c:pt></c:strCache></c:strRef></c:cat>` +
		`<c:val><c:numRef><c:numCache><c:pt idx="0"><c:v>10</c:v></c:pt><c:pt idx="1"><c:v>2.2999999999999998</c:v></c:pt></c:numCache></c:numRef></c:val></c:ser>` +
		`</c:barChart><c:valAx><c:title><c:tx><c:rich><a:p><a:r><a:t>CHF</a:t></a:r></a:p></c:rich></c:tx></c:title></c:valAx></c:plotArea></c:chart></c:chartSpace>`
	smartFrame := `<p:graphicFrame><p:nvGraphicFramePr/><p:xfrm/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/diagram"><dgm:relIds xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" r:dm="rId5" r:lo="rId6"/></a:graphicData></a:graphic></p:graphicFrame>`
	smart := `<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" ` + nsA + `><dgm:ptLst><dgm:pt modelId="0" type="doc"><dgm:t><a:p><a:r><a:t>Plan</a:t></a:r></a:p></dgm:t></dgm:pt><dgm:pt modelId="1"><dgm:t><a:p><a:r><a:t>Build</a:t></a:r></a:p><a:p><a:r><a:t>fast</a:t></a:r></a:p></dgm:t></dgm:pt><dgm:pt modelId="2" type="parTrans"/></dgm:ptLst></dgm:dataModel>`
	group := `<p:grpSp><p:nvGrpSpPr/><p:grpSpPr/>` + shape("", "Grouped") + `</p:grpSp>`
	notes := `<?xml version="1.0"?><p:notes ` + nsA + ` ` + nsR + ` ` + nsP + `><p:cSld><p:spTree>` + shape("sldImg", "") + shape("body", "Speaker note") + shape("sldNum", "1") + `</p:spTree></p:cSld></p:notes>`
	b := zipOf(t,
		entry{name: "[Content_Types].xml", body: `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`},
		entry{name: "_rels/.rels", body: rels([3]string{"rId1", "officeDocument", "ppt/presentation.xml"})},
		entry{name: "ppt/presentation.xml", body: pres},
		entry{name: "ppt/_rels/presentation.xml.rels", body: rels([3]string{"rId2", "slide", "slides/slide1.xml"}, [3]string{"rId3", "slide", "slides/slide2.xml"})},
		entry{name: "ppt/slides/slide1.xml", body: slide(` show="0"`, shape("title", "Second shown")+table+group+shape("sldNum", "7")+chartFrame+smartFrame)},
		entry{name: "ppt/slides/_rels/slide1.xml.rels", body: rels([3]string{"rId4", "chart", "../charts/chart1.xml"}, [3]string{"rId5", "diagramData", "../diagrams/data1.xml"})},
		entry{name: "ppt/charts/chart1.xml", body: chart},
		entry{name: "ppt/diagrams/data1.xml", body: smart},
		entry{name: "ppt/slides/slide2.xml", body: slide("", shape("ctrTitle", "First shown")+shape("body", "Body A\nBody B")+
			`<mc:AlternateContent><mc:Choice Requires="p14">`+shape("", "Once")+`</mc:Choice><mc:Fallback>`+shape("", "Once")+`</mc:Fallback></mc:AlternateContent>`+pic+video)},
		entry{name: "ppt/slides/_rels/slide2.xml.rels", body: rels([3]string{"rId1", "notesSlide", "../notesSlides/notesSlide2.xml"}, [3]string{"rId2", "image", "../media/image1.png"}, [3]string{"rId3", "video", "../media/media1.mp4"})},
		entry{name: "ppt/notesSlides/notesSlide2.xml", body: notes},
		entry{name: "ppt/media/image1.png", body: pngOf(t, 16, 9), store: true},
		entry{name: "ppt/media/media1.mp4", body: string(mp4Of("isom", "vide", 1000, 3000, 1280, 720)), store: true},
	)
	idx, objs := mustRun(t, b, "deck.pptx", "", Limits{})
	type want struct {
		kind     content.Type
		data     string
		slide    int
		part     string
		label    string
		location string
	}
	wants := []want{
		{content.Text, "First shown\n\nBody A\nBody B\n\nOnce", 1, "slide2", "First shown", "slide:1"},
		{content.Text, "Speaker note", 1, "notesSlide2", "First shown", "slide:1/notes"},
		{content.Image, "", 1, "slide2", "Logo", "slide:1"},
		{content.VideoStream, "", 1, "slide2", "", "slide:1"},
		{content.Text, "Second shown\n\n| k | v |\n| --- | --- |\n| 1 |  |\n\nGrouped\n\nChart: Revenue / CHF\n2024: Q1 = 10; Q2 = 2.3\n\nPlan\nBuild fast", 2, "slide1", "Second shown", "slide:2"},
	}
	if len(objs) != len(wants) {
		t.Fatalf("%d objects, want %d: %q", len(objs), len(wants), texts(objs))
	}
	for i, w := range wants {
		o := objs[i]
		got := want{o.ContentType, o.Data, o.Ref.SlideIndex, o.Ref.Part, o.Ref.Label, o.Ref.Location}
		if got != w {
			t.Errorf("object %d = %+v\nwant %+v", i+1, got, w)
		}
	}
	if objs[2].Metadata["dimensions"] != "16x9" {
		t.Errorf("image %v", objs[2].Metadata)
	}
	if objs[3].Metadata["duration"] != 3.0 || objs[3].Metadata["dimensions"] != "1280x720" {
		t.Errorf("video %v", objs[3].Metadata)
	}
	if objs[4].Metadata["hidden"] != true {
		t.Errorf("hidden slide %v", objs[4].Metadata)
	}
	if idx.Structure["slides"] != 2 || idx.Structure["notes"] != 1 || idx.Structure["slideSize"] != "960x540pt" {
		t.Errorf("structure %v", idx.Structure)
	}
}

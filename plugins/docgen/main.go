// Plugin docgen makes files for the workspace: generateDocument (Markdown,
// CSV, DOCX, PDF from an outline), editDocument (a new version of a text,
// Markdown, CSV or DOCX document), createChart (a PNG chart from tabular
// data) and generateImage (through the provider's image model). Every file
// is stored through the host's files capability, which binds it to the
// running workflow (the file bridge, docs/files.md); results name both the docItem
// reference and the file id.
package main

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/files"
	"github.com/agenthost/agenthost/pdk/images"
)

func main() {}

func init() {
	pdk.Tool("generateDocument", "Write a document file (Markdown, CSV, DOCX or PDF) from an outline: a title and blocks of headings, paragraphs, lists and tables. CSV takes the outline's one table. The file is stored in the workspace and attached to the conversation; the result names its docItem reference and file id.",
		generateDocument)
	pdk.Tool("editDocument", "Edit a document of the workspace (text, Markdown, CSV or DOCX) and store the result as a new version: replace text, replace a Markdown section or a paragraph, or append. The result names the new file's docItem reference and file id.",
		editDocumentTool)
	pdk.Tool("createChart", "Draw a bar, line or pie chart as a PNG image from labels and series of values. The image is stored in the workspace and attached to the conversation.",
		createChart)
	pdk.Tool("generateImage", "Generate an image from a text prompt with the image model. The PNG is stored in the workspace and attached to the conversation.",
		generateImage)
}

// GenerateArgs are generateDocument's arguments.
type GenerateArgs struct {
	Format   string  `json:"format" description:"markdown, csv, docx or pdf" enum:"markdown,csv,docx,pdf"`
	FileName string  `json:"fileName,omitempty" description:"file name; the format's extension is added when missing (default from the title)"`
	Title    string  `json:"title,omitempty"`
	Blocks   []Block `json:"blocks,omitempty" description:"the document's content in order" maxItems:"5000"`
}

// FileResult is what the file-making tools return: the text with both
// references (files.Written.Summary), and the fields for programs.
type FileResult struct {
	Summary  string `json:"summary"`
	FileID   string `json:"fileId"`
	DocItem  string `json:"docItem,omitempty"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Note     string `json:"note,omitempty"`
}

var formats = map[string]struct{ ext, mime string }{
	"markdown": {".md", "text/markdown; charset=utf-8"},
	"csv":      {".csv", "text/csv; charset=utf-8"},
	"docx":     {".docx", docxMIME},
	"pdf":      {".pdf", "application/pdf"},
}

func generateDocument(a GenerateArgs) (FileResult, error) {
	f, ok := formats[a.Format]
	if !ok {
		return FileResult{}, pdk.Errorf("invalid_arguments", "format %q (want markdown, csv, docx or pdf)", a.Format)
	}
	s := Spec{Title: a.Title, Blocks: a.Blocks}
	if err := s.validate(); err != nil {
		return FileResult{}, pdk.Errorf("invalid_arguments", "%v", err)
	}
	now := time.Now()
	var data []byte
	var err error
	var miss missingGlyphs
	switch a.Format {
	case "markdown":
		data = renderMarkdown(s)
	case "csv":
		data, err = renderCSV(s)
	case "docx":
		data, err = renderDOCX(s, now)
	case "pdf":
		data, miss, err = renderPDF(s, now)
	}
	if err != nil {
		return FileResult{}, pdk.Errorf("invalid_arguments", "%v", err)
	}
	name := fileName(a.FileName, a.Title, "document", f.ext)
	res, err := storeFile(name, f.mime, data, "generateDocument", "Generated")
	if err != nil {
		return FileResult{}, err
	}
	if miss.n > 0 {
		res.Note = fmt.Sprintf("%d characters have no glyph in the PDF's fonts (DejaVu Sans, Droid Sans Fallback) and are written as '?', e.g. %q; the Markdown or DOCX format keeps them", miss.n, string(miss.examples))
		res.Summary += "\n" + res.Note
	}
	return res, nil
}

func editDocumentTool(a EditArgs) (FileResult, error) {
	doc, err := files.Read(a.File, 0)
	if err != nil {
		return FileResult{}, err
	}
	if doc.Truncated {
		return FileResult{}, pdk.Errorf("too_large", "%s is larger (%d bytes) than a document this tool edits", doc.Name, doc.Size)
	}
	kind, err := kindOf(doc.Name, doc.MIMEType)
	if err != nil {
		return FileResult{}, pdk.Errorf("unsupported", "%v", err)
	}
	out, what, err := editDocument(kind, doc.Data, a)
	if errors.Is(err, errEdit) {
		return FileResult{}, pdk.Errorf("invalid_edit", "%v", err)
	} else if err != nil {
		return FileResult{}, err
	}
	name := doc.Name
	if strings.TrimSpace(a.FileName) != "" {
		name = fileName(a.FileName, "", "document", path.Ext(doc.Name))
	}
	res, err := storeFile(name, doc.MIMEType, out, "editDocument", "Edited")
	if err != nil {
		return FileResult{}, err
	}
	res.Note = fmt.Sprintf("%s of %s (%s); the previous version stays as file %s", what, doc.Name, a.File, doc.FileID)
	res.Summary += "\n" + res.Note
	return res, nil
}

func createChart(a ChartArgs) (FileResult, error) {
	png, w, h, err := renderChart(a)
	if err != nil {
		return FileResult{}, pdk.Errorf("invalid_arguments", "%v", err)
	}
	res, err := storeFile(fileName(a.FileName, a.Title, "chart", ".png"), "image/png", png, "createChart", "Created chart")
	if err != nil {
		return FileResult{}, err
	}
	res.Note = fmt.Sprintf("%s chart, %dx%d pixels", a.Type, w, h)
	return res, nil
}

// ImageArgs are generateImage's arguments.
type ImageArgs struct {
	Prompt   string `json:"prompt" description:"what the image shows" minLength:"1" maxLength:"4000"`
	Size     string `json:"size,omitempty" description:"WIDTHxHEIGHT, e.g. 1024x1024 (default: the model's)" pattern:"^[0-9]{2,4}x[0-9]{2,4}$"`
	FileName string `json:"fileName,omitempty" description:"file name (default from the prompt)"`
}

func generateImage(a ImageArgs) (FileResult, error) {
	imgs, err := images.Generate(a.Prompt, a.Size, 1)
	if err != nil {
		return FileResult{}, err
	}
	if len(imgs) == 0 {
		return FileResult{}, pdk.Errorf("no_image", "the image model returned no image")
	}
	im := imgs[0]
	ext := ".png"
	switch im.MIMEType {
	case "image/jpeg":
		ext = ".jpg"
	case "image/webp":
		ext = ".webp"
	}
	res, err := storeFile(fileName(a.FileName, a.Prompt, "image", ext), im.MIMEType, im.Data, "generateImage", "Generated image")
	if err != nil {
		return FileResult{}, err
	}
	if im.RevisedPrompt != "" && im.RevisedPrompt != a.Prompt {
		res.Note = "the model drew: " + im.RevisedPrompt
	}
	return res, nil
}

// storeFile writes the file through the host (which binds it to the
// workflow) and words the result.
func storeFile(name, mimeType string, data []byte, tool, verb string) (FileResult, error) {
	w, err := files.Write(name, mimeType, data, tool+":"+name)
	if err != nil {
		return FileResult{}, err
	}
	return FileResult{Summary: w.Summary(verb), FileID: w.FileID, DocItem: w.DocItem, Name: w.Name,
		MIMEType: w.MIMEType, Size: w.Size}, nil
}

var unsafeName = regexp.MustCompile(`[^\p{L}\p{N} ._()-]+`)

// fileName makes a file name from the asked name, else the title, else
// fallback, with ext added when missing.
func fileName(asked, title, fallback, ext string) string {
	n := strings.TrimSpace(asked)
	if n == "" {
		n = strings.TrimSpace(title)
	}
	n = strings.Trim(unsafeName.ReplaceAllString(n, "-"), " .-")
	if r := []rune(n); len(r) > 80 {
		n = strings.TrimSpace(string(r[:80]))
	}
	if n == "" {
		n = fallback
	}
	if ext != "" && !strings.EqualFold(path.Ext(n), ext) {
		n += ext
	}
	return n
}

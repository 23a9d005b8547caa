// Package content is the shape of extracted content (docs/knowledge.md), shared
// by extractor plugins, which produce it, and the host's knowledge store,
// which keeps it: scalar content objects, each with a reference to where in
// its file (and container) it came from, and a compact index per file.
// Extraction is programmatic: no model is involved.
package content

// Type is one of the five kinds of content object.
type Type string

// The content types.
const (
	Text        Type = "text"
	Image       Type = "image"
	VideoStream Type = "videostream"
	AudioStream Type = "audiostream"
	Other       Type = "other"
)

// Ref says where an object came from. Only the fields that apply are set;
// PageIndex, SlideIndex and Paragraph count from 1.
type Ref struct {
	// ContainerPath is the file's path through its containers, e.g.
	// "archive.zip/folder-a/report.pdf".
	ContainerPath string `json:"containerPath,omitempty"`
	// Location is a readable position, e.g. "page:5/region:bottomLeft",
	// "sheet:Q4!A1:F20", "slide:3/notes".
	Location string `json:"location,omitempty"`
	// Label is a caption or heading the object carries.
	Label      string `json:"label,omitempty"`
	PageIndex  int    `json:"pageIndex,omitempty"`
	SectionID  string `json:"sectionId,omitempty"`
	SheetName  string `json:"sheetName,omitempty"`
	SlideIndex int    `json:"slideIndex,omitempty"`
	Paragraph  int    `json:"paragraph,omitempty"`
	// Part names the part of an office file (document, header1, comments,
	// notesSlide3).
	Part string `json:"part,omitempty"`
}

// Object is one scalar piece of content.
type Object struct {
	ID          string `json:"id"`
	ContentType Type   `json:"contentType"`
	// Data is the text, or for other types a reference or base64 bytes as
	// Metadata["encoding"] says.
	Data     string         `json:"data"`
	Ref      Ref            `json:"contextRef"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// Sequence orders objects within their context.
	Sequence int `json:"sequence"`
}

// Summary is an object's line in its file's index.
type Summary struct {
	ID          string `json:"id"`
	ContentType Type   `json:"contentType"`
	Ref         Ref    `json:"contextRef"`
	CharCount   int    `json:"charCount,omitempty"`
	// Dimensions of an image or video, "1920x1080".
	Dimensions string `json:"dimensions,omitempty"`
	// Duration of audio or video in seconds.
	Duration float64 `json:"duration,omitempty"`
}

// Index is a file's content index: its structure and a summary per content
// object, without the store's ownership fields.
type Index struct {
	FileName      string `json:"fileName"`
	MIMEType      string `json:"mimeType"`
	ContainerPath string `json:"containerPath,omitempty"`
	TotalObjects  int    `json:"totalObjects"`
	TotalSize     int64  `json:"totalSize"`
	// Structure is the file's shape: pages, sheets, slides, sections, images.
	Structure map[string]any `json:"structure,omitempty"`
	Objects   []Summary      `json:"objectSummary"`
}

// Summarize makes an object's index line.
func Summarize(o Object) Summary {
	s := Summary{ID: o.ID, ContentType: o.ContentType, Ref: o.Ref}
	if o.ContentType == Text {
		s.CharCount = len([]rune(o.Data))
	}
	if d, ok := o.Metadata["dimensions"].(string); ok {
		s.Dimensions = d
	}
	if d, ok := o.Metadata["duration"].(float64); ok {
		s.Duration = d
	}
	return s
}

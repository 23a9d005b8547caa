// Package extract turns office documents and simple formats into content
// objects (pdk/content) with precise references: DOCX paragraphs, tables,
// headers, footers, notes and comments; XLSX sheets as cell tables; PPTX
// slides and speaker notes; OpenDocument text, spreadsheets and
// presentations alike; RTF and Word 97-2003 (.doc) paragraphs and
// tables; Excel 5.0/95 and 97-2003 (.xls) sheets; PowerPoint 97-2003 (.ppt) slides
// and notes; plain text, Markdown, CSV, JSON, XML and HTML as
// text; images, audio and video as one object each with what their headers
// say (dimensions, format, duration). Dates in spreadsheets are ISO dates,
// numbers have no binary noise. The content decides over a type or a name
// that would make a document garbage (an RTF sent as JSON or named .doc);
// what is not read (password-protected files, Word 6/95, Excel 2.x-4.0,
// Visio) is refused by an error that names it.
//
// It is written to be compiled into sandboxed extractor plugins
// (GOOS=wasip1): no cgo, no processes, no file system. The input is an
// io.ReaderAt with its size, so a plugin can serve it from a range-read
// capability instead of copying it whole into the guest; only the parts a
// format needs are read, each bounded by Limits, so a zip bomb costs at most
// the configured number of bytes before it fails.
//
// References, by format:
//
//	DOCX  Part "document", "header1", "footer2", "footnotes", "endnotes",
//	      "comments"; Paragraph counts the non-empty paragraphs of that part
//	      from 1 in document order, table cells included (a table object
//	      carries its first paragraph, Metadata["lastParagraph"] its last);
//	      SectionID is the outline number ("2.1") of the nearest heading
//	      above, Label the heading's own text on heading paragraphs.
//	      Imported parts (w:altChunk: HTML, RTF, text, MHTML, a whole
//	      DOCX) are paragraphs of the part that imports them, at their
//	      place, Metadata["altChunk"] naming the imported part.
//	XLSX  SheetName, Location "sheet:NAME!A1:F20" (the block's used range).
//	PPTX  SlideIndex in presentation order (sldIdLst, not file names), Part
//	      the slide's own part name ("slide3", "notesSlide3"), Location
//	      "slide:2" or "slide:2/notes".
//	ODT   as DOCX: Part "document", "footnotes", "endnotes", "comments";
//	      Paragraph; SectionID and Label from text:h headings.
//	ODS   as XLSX. ODP as PPTX, Part the page's name; a master page's own
//	      text Part "master", Location "master:NAME".
//	RTF, DOC  Part "document" (and for DOC "footnotes", "headers",
//	      "comments", "endnotes", "textboxes"), Paragraph of the block's
//	      first paragraph, Location "paragraph:A-B".
//	XLS   as XLSX.
//	PPT   as PPTX, Part "slideN" or "notesN" (N the slide's index).
//	text  Location "line:A-B"; Markdown and HTML add SectionID and Label.
//
// Embedded documents (OLE objects of PPTX and DOCX, OpenDocument
// draw:object, DOCX w:altChunk) are read by their own format's reader and
// their text placed where they stand, at most a few levels deep and within
// the one unzip budget of the file (Limits.MaxUnzippedBytes).
//
// Objects that are not text (images, embedded media) have an empty Data
// unless Limits.InlineMediaBytes lets small ones be embedded; their
// Metadata["encoding"] says which: "base64" for embedded bytes, "part" when
// Metadata["part"] names the zip part that holds them, "file" when the
// object is the whole input.
package extract

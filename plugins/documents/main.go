// Command documents is the built-in plugin of document tools
// (docs/knowledge.md): browseContainer, readContentObjects, readSection,
// searchKnowledge and extractContainerItem. It holds no data and reaches no
// file itself: every tool asks the host's knowledge capability, which acts
// for the user the call runs for, inside that user's access rights. Results
// are compact text for a model, each piece with where it came from (file,
// page, section, container path) so the model can cite and read on.
package main

import (
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/knowledge"
)

type browseArgs struct {
	File    string `json:"file,omitempty" description:"the file or archive: its id, or docItem:<id> of a document attached in this workflow (give file or folder)"`
	Path    string `json:"path,omitempty" maxLength:"4096" description:"for an archive: show this entry's index instead, by its path as browseContainer lists it"`
	Folder  string `json:"folder,omitempty" maxLength:"100" description:"a folder of this workspace to list instead of a file: its id, or / for the files in no folder"`
	Cursor  string `json:"cursor,omitempty" maxLength:"1000" description:"with folder: continue the listing where the previous answer's cursor said"`
	Objects int    `json:"objects,omitempty" minimum:"0" maximum:"500" default:"30" description:"how many object summaries to list (0: the default 30)"`
}

type readArgs struct {
	File     string   `json:"file" minLength:"1" description:"the file: its id, or docItem:<id> of a document attached in this workflow"`
	Path     string   `json:"path,omitempty" maxLength:"4096" description:"for an archive: the entry to read, by its path as browseContainer lists it"`
	Pages    []int    `json:"pages,omitempty" maxItems:"200" description:"only these pages (from 1), e.g. [5,6,7]"`
	Types    []string `json:"types,omitempty" maxItems:"5" description:"only these content types: text, image, videostream, audiostream, other"`
	Section  string   `json:"section,omitempty" maxLength:"300" description:"only this section: its id from browseContainer (s3, 2.1) or its title"`
	Offset   int      `json:"offset,omitempty" minimum:"0" description:"skip this many matching objects (continue a read where nextOffset said)"`
	Limit    int      `json:"limit,omitempty" minimum:"1" maximum:"200" default:"20" description:"at most this many objects (pages of a large PDF)"`
	MaxBytes int      `json:"maxBytes,omitempty" minimum:"1000" maximum:"1048576" default:"49152" description:"at most this many bytes of text in the result"`
}

type sectionArgs struct {
	File     string `json:"file" minLength:"1" description:"the file: its id, or docItem:<id> of a document attached in this workflow"`
	Path     string `json:"path,omitempty" maxLength:"4096" description:"for an archive: the entry to read, by its path as browseContainer lists it"`
	Section  string `json:"section" minLength:"1" maxLength:"300" description:"the section's id from browseContainer (s3, 2.1) or its title (\"Installation\")"`
	Offset   int    `json:"offset,omitempty" minimum:"0" description:"skip this many objects of the section (continue where nextOffset said)"`
	Limit    int    `json:"limit,omitempty" minimum:"1" maximum:"200" default:"20" description:"at most this many objects (pages of a large PDF)"`
	MaxBytes int    `json:"maxBytes,omitempty" minimum:"1000" maximum:"1048576" default:"49152" description:"at most this many bytes of text in the result"`
}

type searchArgs struct {
	Query   string   `json:"query" minLength:"1" maxLength:"1000" description:"what to look for, in words"`
	Limit   int      `json:"limit,omitempty" minimum:"1" maximum:"50" default:"10" description:"at most this many passages"`
	Files   []string `json:"files,omitempty" maxItems:"50" description:"only in these files (ids or docItem:<id>)"`
	Layer   string   `json:"layer,omitempty" enum:"instance,shared" description:"instance: this workspace's files only; shared: the organisation's shared files only; omit for every file you can read"`
	Page    int      `json:"page,omitempty" minimum:"1" description:"only passages from this page"`
	Section string   `json:"section,omitempty" maxLength:"300" description:"only passages from this section id"`
	Type    string   `json:"type,omitempty" enum:"text,image,videostream,audiostream,other" description:"only this content type"`
	Hidden  string   `json:"hidden,omitempty" enum:"include,exclude,only" description:"what documents hide (hidden slides, sheets, pages): include (default), exclude, or only"`
}

type extractArgs struct {
	File string `json:"file" minLength:"1" description:"the container (archive): its id, or docItem:<id> of a document attached in this workflow"`
	Path string `json:"path" minLength:"1" maxLength:"4096" description:"the entry's path inside the container, as browseContainer lists it"`
}

func init() {
	pdk.Tool("browseContainer",
		"Shows what a file, archive or folder holds before reading it: type, size, indexing status, page count, sections (with ids and page ranges), "+
			"a summary of its content objects (id, type, page/section, size) and, for an archive, its entries; for a folder of this workspace, its subfolders and files with their indexing status. "+
			"Large PDFs show which pages were read so far; their other pages are extracted when first read. "+
			"Use it first, then readSection or readContentObjects for the parts you need.",
		browse, pdk.ReadOnly())
	pdk.Tool("readContentObjects",
		"Reads a file's extracted content objects (text of pages, paragraphs, slides, sheets; image and media entries), filtered by pages, "+
			"content types and/or section, in reading order, paged with offset/limit and capped in bytes. Each object comes with its page, "+
			"section and location. Pages of a large PDF not read before are extracted now and kept for later reads and searches.",
		readObjects, pdk.ReadOnly())
	pdk.Tool("readSection",
		"Reads one section of a document (by the id or title browseContainer lists): the text of its pages (PDF) or paragraphs (office files), "+
			"including its subsections, paged with offset/limit and capped in bytes.",
		readSection, pdk.ReadOnly())
	pdk.Tool("searchKnowledge",
		"Searches the documents you can read for passages matching a question (lexical, and by meaning when the host embeds), "+
			"optionally within given files, a page, a section or a layer. Returns the best passages with file, page and section.",
		searchKnowledge, pdk.ReadOnly())
	pdk.Tool("extractContainerItem",
		"Extracts one entry of an archive (ZIP, TAR, GZ) on demand, by its path from browseContainer, so it is indexed and can be read "+
			"and searched like any file. Returns the entry with its status.",
		extractItem)
}

func main() {}

func browse(a browseArgs) (string, error) {
	switch {
	case a.Folder != "" && a.File != "":
		return "", fmt.Errorf("give either file or folder, not both")
	case a.Folder != "":
		return browseFolder(a)
	case strings.TrimSpace(a.File) == "":
		return "", fmt.Errorf("give a file (its id or docItem:<id>) or a folder (its id, or / for the files in no folder)")
	}
	n := a.Objects
	if n == 0 {
		n = 30
	}
	idx, err := knowledge.GetIndex(knowledge.IndexRequest{File: a.File, Path: a.Path, ObjectsLimit: n})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (file %s, %s, %d bytes): %s", idx.FileName, idx.FileID, idx.MIMEType, idx.Size, idx.Status)
	if idx.Error != "" {
		fmt.Fprintf(&b, " (%s)", idx.Error)
	}
	if idx.Pages > 0 {
		fmt.Fprintf(&b, ", %d pages", idx.Pages)
	}
	b.WriteString("\n")
	if idx.OnDemand {
		fmt.Fprintf(&b, "Large PDF: pages are extracted when read; read so far: %s.\n", ranges(idx.ExtractedPages))
	}
	if len(idx.Sections) > 0 {
		b.WriteString("Sections (id: title, pages):\n")
		for _, s := range idx.Sections {
			fmt.Fprintf(&b, "%s%s: %s", strings.Repeat("  ", max(1, s.Level)), s.ID, s.Title)
			if s.StartPage > 0 {
				fmt.Fprintf(&b, " (p. %s)", span(s.StartPage, s.EndPage))
			}
			b.WriteString("\n")
		}
	}
	if facts := structureFacts(idx.Structure); facts != "" {
		fmt.Fprintf(&b, "Structure: %s\n", facts)
	}
	if idx.TotalObjects > 0 {
		fmt.Fprintf(&b, "Content objects: %d", idx.TotalObjects)
		if len(idx.Objects) < idx.TotalObjects {
			fmt.Fprintf(&b, " (first %d listed)", len(idx.Objects))
		}
		b.WriteString("\n")
		for _, o := range idx.Objects {
			fmt.Fprintf(&b, "  %s %s %s", o.ID, o.ContentType, where(o.Ref))
			switch {
			case o.CharCount > 0:
				fmt.Fprintf(&b, " %d chars", o.CharCount)
			case o.Dimensions != "":
				fmt.Fprintf(&b, " %s", o.Dimensions)
			}
			b.WriteString("\n")
		}
	}
	if len(idx.Entries) > 0 {
		fmt.Fprintf(&b, "Container entries (%d):%s\n", len(idx.Entries), entryList(idx.Entries))
		b.WriteString("Read an entry with readContentObjects or readSection {file, path}; extract one not indexed yet with extractContainerItem {file, path}.")
		return b.String(), nil
	}
	b.WriteString("Read on with readSection {file, section} or readContentObjects {file, pages}.")
	return b.String(), nil
}

// browseFolder lists a folder like a container: subfolders, then files
// with their indexing status, paged.
func browseFolder(a browseArgs) (string, error) {
	id := a.Folder
	if id == "/" {
		id = ""
	}
	f, err := knowledge.BrowseFolder(knowledge.FolderRequest{Folder: id, Cursor: a.Cursor})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if f.ID == "" {
		b.WriteString("Folder / (files in no folder)")
	} else {
		fmt.Fprintf(&b, "Folder %s (id %s)", f.Name, f.ID)
	}
	fmt.Fprintf(&b, ": %d subfolders, %d files on this page\n", len(f.Subfolders), len(f.Files))
	for _, s := range f.Subfolders {
		fmt.Fprintf(&b, "  %s/  (folder %s)\n", s.Name, s.ID)
	}
	for _, x := range f.Files {
		fmt.Fprintf(&b, "  %s  %s  %d bytes  %s  (file %s)", x.Name, x.MIMEType, x.Size, x.Status, x.FileID)
		if x.Error != "" {
			fmt.Fprintf(&b, "  error: %s", x.Error)
		}
		b.WriteString("\n")
	}
	if f.Next != "" {
		fmt.Fprintf(&b, "More files: call again with cursor %q.\n", f.Next)
	}
	b.WriteString("Browse a file with browseContainer {file}, a subfolder with browseContainer {folder}.")
	return b.String(), nil
}

func readObjects(a readArgs) (string, error) {
	types := make([]content.Type, len(a.Types))
	for i, t := range a.Types {
		types[i] = content.Type(t)
	}
	r, err := knowledge.ReadObjects(knowledge.ObjectsRequest{File: a.File, Path: a.Path, Pages: a.Pages, Types: types, Section: a.Section,
		Offset: a.Offset, Limit: a.Limit, MaxBytes: a.MaxBytes})
	if err != nil {
		return "", err
	}
	return formatObjects(r, a.Offset), nil
}

func readSection(a sectionArgs) (string, error) {
	r, err := knowledge.ReadSection(knowledge.SectionRequest{File: a.File, Path: a.Path, Section: a.Section,
		Offset: a.Offset, Limit: a.Limit, MaxBytes: a.MaxBytes})
	if err != nil {
		return "", err
	}
	return formatObjects(r, a.Offset), nil
}

func searchKnowledge(a searchArgs) (string, error) {
	hits, err := knowledge.Search(knowledge.SearchRequest{Query: a.Query, Limit: a.Limit, Layer: a.Layer, FileIDs: a.Files,
		Page: a.Page, Section: a.Section, Type: content.Type(a.Type), Hidden: a.Hidden})
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		return fmt.Sprintf("No passage matches %q.", a.Query), nil
	}
	var b strings.Builder
	for i, h := range hits {
		hidden := ""
		if h.Hidden {
			hidden = " (hidden in the document)"
		}
		fmt.Fprintf(&b, "%d. %s (file %s) %s%s, score %.3g\n%s\n\n", i+1, h.FileName, h.FileID, where(h.Ref), hidden, h.Score, strings.TrimSpace(h.Text))
	}
	return strings.TrimSpace(b.String()), nil
}

func extractItem(a extractArgs) (string, error) {
	e, err := knowledge.ExtractItem(a.File, a.Path)
	if err != nil {
		return "", err
	}
	return "Extracted " + entryLine(e), nil
}

// formatObjects writes a page of objects: a header with the file, the span
// and the section, then each object's origin line and its text.
func formatObjects(r knowledge.Objects, offset int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (file %s)", r.FileName, r.FileID)
	if r.Path != "" {
		fmt.Fprintf(&b, ", entry %s", r.Path)
	}
	if r.Section != nil {
		fmt.Fprintf(&b, ", section %s %q", r.Section.ID, r.Section.Title)
		if r.Section.StartPage > 0 {
			fmt.Fprintf(&b, " (p. %s)", span(r.Section.StartPage, r.Section.EndPage))
		}
	}
	if len(r.Objects) == 0 {
		fmt.Fprintf(&b, ": no content objects match (%d in all).", r.Total)
		return b.String()
	}
	fmt.Fprintf(&b, ": objects %d-%d of %d", offset+1, offset+len(r.Objects), r.Total)
	if len(r.ExtractedPages) > 0 {
		fmt.Fprintf(&b, " (pages %s extracted now)", ranges(r.ExtractedPages))
	}
	b.WriteString("\n")
	for _, o := range r.Objects {
		fmt.Fprintf(&b, "\n--- %s %s %s\n", o.ID, o.ContentType, where(o.Ref))
		switch {
		case o.ContentType == content.Text && strings.TrimSpace(o.Data) == "":
			b.WriteString("(no text on this page: a picture or a scan)\n")
		case o.ContentType != content.Text:
			fmt.Fprintf(&b, "(%s object; its bytes are not kept in the knowledge store)\n", o.ContentType)
		default:
			b.WriteString(strings.TrimSpace(o.Data))
			b.WriteString("\n")
		}
	}
	if r.Truncated {
		b.WriteString("\n[cut at the byte limit; raise maxBytes to read more of it]\n")
	}
	if r.NextOffset > 0 {
		fmt.Fprintf(&b, "\n[more: call again with offset %d]\n", r.NextOffset)
	}
	return b.String()
}

// where is an object's origin in words: page, section, location.
func where(r content.Ref) string {
	var parts []string
	if r.ContainerPath != "" {
		parts = append(parts, "in "+r.ContainerPath)
	}
	if r.PageIndex > 0 {
		parts = append(parts, fmt.Sprintf("page %d", r.PageIndex))
	}
	if r.SlideIndex > 0 {
		parts = append(parts, fmt.Sprintf("slide %d", r.SlideIndex))
	}
	if r.SheetName != "" {
		parts = append(parts, "sheet "+r.SheetName)
	}
	if r.Paragraph > 0 {
		parts = append(parts, fmt.Sprintf("paragraph %d", r.Paragraph))
	}
	if r.SectionID != "" {
		s := "section " + r.SectionID
		if r.Label != "" {
			s += fmt.Sprintf(" %q", r.Label)
		}
		parts = append(parts, s)
	} else if r.Label != "" {
		parts = append(parts, fmt.Sprintf("%q", r.Label))
	}
	if r.Location != "" && r.PageIndex == 0 {
		parts = append(parts, r.Location)
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// structureFacts lists the structure's scalar facts (counts, flags).
func structureFacts(s map[string]any) string {
	var out []string
	for _, k := range sortedKeys(s) {
		switch v := s[k].(type) {
		case float64:
			out = append(out, fmt.Sprintf("%s %g", k, v))
		case bool:
			if v {
				out = append(out, k)
			}
		case string:
			if v != "" && len(v) < 80 {
				out = append(out, k+" "+v)
			}
		}
	}
	return strings.Join(out, ", ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func span(from, to int) string {
	if to <= from {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d-%d", from, to)
}

// ranges writes sorted pages as runs: 1-3, 7, 9-10.
func ranges(pages []int) string {
	if len(pages) == 0 {
		return "none"
	}
	var parts []string
	for i := 0; i < len(pages); {
		j := i
		for j+1 < len(pages) && pages[j+1] == pages[j]+1 {
			j++
		}
		parts = append(parts, span(pages[i], pages[j]))
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// Command filetools is the built-in plugin of the agent's file tools
// (docs/files.md): listFiles, readFile,
// writeFile, moveFile, tagFile, searchFiles, getFileInfo, replaceInFile and
// applyFileEdit. It holds no data and reaches no file itself: every tool
// asks the host's files capability (and, for searching and for the text of
// binary documents, the knowledge capability), which acts for the user the
// call runs for, in the workspace that offered the tool. Every change of a
// file's content is a new version the host keeps; applyFileEdit changes
// nothing until the user accepts.
package main

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/files"
	"github.com/agenthost/agenthost/pdk/knowledge"
)

type listArgs struct {
	Folder   string   `json:"folder,omitempty" maxLength:"1000" description:"only files in this folder: its id or path (Reports/2024); / for files in no folder; omit for every folder"`
	Tags     []string `json:"tags,omitempty" maxItems:"20" description:"only files carrying all these tags"`
	MIMEType string   `json:"mimeType,omitempty" maxLength:"200" description:"only this type (application/pdf) or family (image/*)"`
	Name     string   `json:"name,omitempty" maxLength:"255" description:"only names matching this pattern, * any run, ? one character, case-insensitive (*.md)"`
	Limit    int      `json:"limit,omitempty" minimum:"1" maximum:"200" default:"50" description:"at most this many files"`
	Cursor   string   `json:"cursor,omitempty" maxLength:"1000" description:"continue a listing where the previous answer's cursor said"`
}

type readArgs struct {
	File     string `json:"file" minLength:"1" maxLength:"1100" description:"the file: its id, or docItem:<id> of a document attached in this workflow"`
	Offset   int64  `json:"offset,omitempty" minimum:"0" description:"start at this byte (text) or content object (documents); continue where the previous answer said"`
	MaxBytes int64  `json:"maxBytes,omitempty" minimum:"1000" maximum:"262144" default:"32768" description:"at most this many bytes of text"`
}

type writeArgs struct {
	Name        string `json:"name,omitempty" maxLength:"255" description:"create: the new file's name (one name, no folders: use folder); overwrite/append: the file by name when file is not given"`
	File        string `json:"file,omitempty" maxLength:"1100" description:"overwrite/append: the file: its id or docItem:<id>"`
	Content     string `json:"content" description:"the text to write"`
	Mode        string `json:"mode,omitempty" enum:"create,overwrite,append" default:"create" description:"create a new file, overwrite a file's content (a new version) or append to it"`
	Folder      string `json:"folder,omitempty" maxLength:"1000" description:"create: put the new file into this folder (id or path)"`
	MIMEType    string `json:"mimeType,omitempty" maxLength:"200" description:"create: the type (default: from the name)"`
	BaseVersion int    `json:"baseVersion,omitempty" minimum:"0" description:"overwrite/append: the version you read; refused if the file changed since"`
}

type moveArgs struct {
	File    string `json:"file" minLength:"1" maxLength:"1100" description:"the file: its id or docItem:<id>"`
	Folder  string `json:"folder" maxLength:"1000" description:"the folder to move it into: its id or path; / for no folder"`
	NewName string `json:"newName,omitempty" maxLength:"255" description:"also rename it"`
}

type tagArgs struct {
	File   string   `json:"file" minLength:"1" maxLength:"1100" description:"the file: its id or docItem:<id>"`
	Add    []string `json:"add,omitempty" maxItems:"20" description:"tags to add"`
	Remove []string `json:"remove,omitempty" maxItems:"20" description:"tags to remove"`
}

type searchArgs struct {
	Query string `json:"query" minLength:"1" maxLength:"1000" description:"what to look for in the files' contents"`
	Limit int    `json:"limit,omitempty" minimum:"1" maximum:"50" default:"10" description:"at most this many files"`
}

type infoArgs struct {
	File string `json:"file" minLength:"1" maxLength:"1100" description:"the file: its id or docItem:<id>"`
}

type replaceArgs struct {
	File        string `json:"file" minLength:"1" maxLength:"1100" description:"the text file: its id or docItem:<id>"`
	Old         string `json:"old" minLength:"1" description:"the exact text to replace (include enough context to match once)"`
	New         string `json:"new" description:"the replacement"`
	All         bool   `json:"all,omitempty" description:"replace every occurrence (otherwise old must occur exactly once)"`
	BaseVersion int    `json:"baseVersion,omitempty" minimum:"0" description:"the version you read; refused if the file changed since"`
}

// Edit is one replacement of an applyFileEdit.
type Edit struct {
	Old string `json:"old" minLength:"1" description:"exact text of the file to replace; must occur exactly once"`
	New string `json:"new" description:"the replacement"`
}

type applyArgs struct {
	File        string `json:"file" minLength:"1" maxLength:"1100" description:"the text file: its id or docItem:<id>"`
	Edits       []Edit `json:"edits,omitempty" maxItems:"100" description:"replacements applied in order (give edits or content)"`
	Content     string `json:"content,omitempty" description:"the whole new text instead of edits"`
	Description string `json:"description,omitempty" maxLength:"2000" description:"what the change does and why, for the user who decides"`
	BaseVersion int    `json:"baseVersion,omitempty" minimum:"0" description:"the version the edit is made on (default: the current one)"`
}

func init() {
	pdk.Tool("listFiles", "Lists the workspace's files with their id, type, size, version, tags and folder, filtered by folder (id or path), tags, "+
		"type (application/pdf, image/*) and name pattern (*.md), by name, paged with cursor.", listFiles, pdk.ReadOnly())
	pdk.Tool("readFile", "Reads a file's text. Text files are read as they are, paged by byte offset; documents (PDF, Office…) give the text "+
		"extracted when they were indexed, paged by content object. Says the file's version, which writeFile, replaceInFile and applyFileEdit take as baseVersion.",
		readFile, pdk.ReadOnly())
	pdk.Tool("writeFile", "Writes a text file: mode create makes a new file (optionally in a folder) and attaches it to this conversation; "+
		"overwrite replaces a file's content and append adds to its end, each as a new version (the old ones are kept and restorable).", writeFile)
	pdk.Tool("moveFile", "Moves a file into a folder (id or path; / for none), optionally renaming it.", moveFile)
	pdk.Tool("tagFile", "Adds and removes tags of a file.", tagFile)
	pdk.Tool("searchFiles", "Searches the contents of this workspace's files and names the files that match best, each with its best passage.",
		searchFiles, pdk.ReadOnly())
	pdk.Tool("getFileInfo", "Describes a file: id, name, type, size, folder, tags, status, its versions and the edits proposed to it that await the user's decision.",
		getFileInfo, pdk.ReadOnly())
	pdk.Tool("replaceInFile", "Replaces exact text in a text file as a new version: old must occur exactly once (or set all). "+
		"No match or several matches change nothing and say so.", replaceInFile)
	pdk.Tool("applyFileEdit", "Proposes an edit of a text file (replacements or the whole new text) to the user, who sees its diff and accepts or rejects it; "+
		"the file does not change until then. Use it for changes the user should review.", applyFileEdit)
}

func main() {}

func describe(it files.Item) string {
	s := fmt.Sprintf("%s (file %s, %s, %d bytes, version %d", it.Name, it.ID, it.MIMEType, it.Size, max(1, it.Version))
	if it.FolderPath != "" {
		s += ", folder " + it.FolderPath
	}
	if len(it.Tags) > 0 {
		s += ", tags " + strings.Join(it.Tags, ", ")
	}
	if it.Status != "" && it.Status != "active" {
		s += ", " + it.Status
	}
	return s + ")"
}

func listFiles(a listArgs) (string, error) {
	l, err := files.List(files.ListRequest{Folder: a.Folder, Tags: a.Tags, MIMEType: a.MIMEType, Name: a.Name, Limit: a.Limit, Cursor: a.Cursor})
	if err != nil {
		return "", err
	}
	if len(l.Files) == 0 {
		return "No files match.", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d files:\n", len(l.Files))
	for _, f := range l.Files {
		b.WriteString("- " + describe(f) + "\n")
	}
	if l.Next != "" {
		fmt.Fprintf(&b, "More: call listFiles again with cursor %q.", l.Next)
	}
	return strings.TrimSpace(b.String()), nil
}

// isText reports whether a file's first bytes are text: valid UTF-8 (a
// rune cut at the end of the read does not count) without NUL.
func isText(data []byte, truncated bool) bool {
	if truncated {
		data = trimPartialRune(data)
	}
	return utf8.Valid(data) && !strings.ContainsRune(string(data), 0)
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of data.
func trimPartialRune(data []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(data); i++ {
		if utf8.RuneStart(data[len(data)-i]) {
			if !utf8.FullRune(data[len(data)-i:]) {
				return data[:len(data)-i]
			}
			break
		}
	}
	return data
}

func readFile(a readArgs) (string, error) {
	if a.MaxBytes == 0 {
		a.MaxBytes = 32768
	}
	f, err := files.ReadAt(a.File, a.Offset, a.MaxBytes)
	if err != nil {
		return "", err
	}
	if !isText(f.Data, f.Truncated) {
		return readExtracted(a, f)
	}
	data := f.Data
	if f.Truncated {
		data = trimPartialRune(data)
	}
	end := f.Offset + int64(len(data))
	var b strings.Builder
	fmt.Fprintf(&b, "%s (file %s, %s, version %d)", f.Name, f.FileID, f.MIMEType, max(1, f.Version))
	if f.Offset > 0 || end < f.Size {
		fmt.Fprintf(&b, ", bytes %d-%d of %d", f.Offset, end, f.Size)
	}
	b.WriteString(":\n")
	b.Write(data)
	if end < f.Size {
		fmt.Fprintf(&b, "\n[… more: call readFile with offset %d]", end)
	}
	return b.String(), nil
}

// readExtracted gives a binary document's text from the knowledge store,
// or says clearly why it cannot.
func readExtracted(a readArgs, f files.File) (string, error) {
	r, err := knowledge.ReadObjects(knowledge.ObjectsRequest{File: f.FileID, Types: []content.Type{content.Text}, Offset: int(a.Offset),
		Limit: 50, MaxBytes: int(a.MaxBytes)})
	if err != nil {
		return "", pdk.Errorf("binary_file", "%s (%s, %d bytes) is not a text file and its extracted text is not available (%v); "+
			"browseContainer shows its indexing status", f.Name, f.MIMEType, f.Size, err)
	}
	if len(r.Objects) == 0 {
		if a.Offset > 0 {
			return fmt.Sprintf("%s (file %s): no more text after object %d.", f.Name, f.FileID, a.Offset), nil
		}
		return "", pdk.Errorf("binary_file", "%s (%s, %d bytes) is not a text file and no text was extracted from it (yet): "+
			"browseContainer shows its indexing status", f.Name, f.MIMEType, f.Size)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (file %s, %s, version %d): extracted text, objects %d-%d of %d:\n", f.Name, f.FileID, f.MIMEType, max(1, f.Version),
		a.Offset+1, int(a.Offset)+len(r.Objects), r.Total)
	for _, o := range r.Objects {
		if o.Ref.PageIndex > 0 {
			fmt.Fprintf(&b, "[page %d] ", o.Ref.PageIndex)
		}
		b.WriteString(strings.TrimSpace(o.Data) + "\n")
	}
	if r.NextOffset > 0 {
		fmt.Fprintf(&b, "[… more: call readFile with offset %d]", r.NextOffset)
	}
	return strings.TrimSpace(b.String()), nil
}

// byName finds the one file of the workspace with exactly this name.
func byName(name string) (files.Item, error) {
	glob := strings.NewReplacer("*", "?", "?", "?").Replace(name)
	l, err := files.List(files.ListRequest{Name: glob, Limit: 200})
	if err != nil {
		return files.Item{}, err
	}
	var found []files.Item
	for _, f := range l.Files {
		if f.Name == name {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return files.Item{}, pdk.Errorf("not_found", "no file is named %q in this workspace (listFiles shows the names)", name)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, f := range found {
		ids[i] = describe(f)
	}
	return files.Item{}, pdk.Errorf("ambiguous", "%d files are named %q: %s; pass the one you mean as file", len(found), name, strings.Join(ids, "; "))
}

func writeFile(a writeArgs) (string, error) {
	switch a.Mode {
	case "", "create":
		if a.Name == "" {
			return "", pdk.Errorf("invalid_arguments", "create needs a name")
		}
		if a.File != "" {
			return "", pdk.Errorf("invalid_arguments", "create makes a new file from name; to change file %s use mode overwrite or append", a.File)
		}
		w, err := files.WriteInFolder(a.Folder, a.Name, a.MIMEType, []byte(a.Content), "")
		if err != nil {
			return "", err
		}
		out := w.Summary("Created")
		if a.Folder != "" && a.Folder != "/" {
			out += "\nfolder: " + strings.Trim(a.Folder, "/")
		}
		return out, nil
	case "overwrite", "append":
		ref := a.File
		if ref == "" {
			if a.Name == "" {
				return "", pdk.Errorf("invalid_arguments", "%s needs the file (its id or docItem:<id>) or its name", a.Mode)
			}
			it, err := byName(a.Name)
			if err != nil {
				return "", err
			}
			ref = it.ID
		}
		var c files.Changed
		var err error
		if a.Mode == "overwrite" {
			c, err = files.Overwrite(ref, []byte(a.Content), a.BaseVersion)
		} else {
			c, err = files.Append(ref, []byte(a.Content), a.BaseVersion)
		}
		if err != nil {
			return "", err
		}
		s := fmt.Sprintf("Wrote %s: now version %d (%d bytes); the earlier versions are kept.", describe(c.File), c.Version.Version, c.Version.Size)
		if c.Warning != "" {
			s += "\nwarning: " + c.Warning
		}
		return s, nil
	}
	return "", pdk.Errorf("invalid_arguments", "mode %q: want create, overwrite or append", a.Mode)
}

func moveFile(a moveArgs) (string, error) {
	it, err := files.Move(a.File, a.Folder, a.NewName)
	if err != nil {
		return "", err
	}
	return "Moved: " + describe(it), nil
}

func tagFile(a tagArgs) (string, error) {
	it, err := files.Tag(a.File, a.Add, a.Remove)
	if err != nil {
		return "", err
	}
	return "Tagged: " + describe(it), nil
}

func searchFiles(a searchArgs) (string, error) {
	limit := a.Limit
	if limit == 0 {
		limit = 10
	}
	hits, err := knowledge.Search(knowledge.SearchRequest{Query: a.Query, Limit: min(50, limit*3), Layer: "instance"})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	seen := map[string]bool{}
	n := 0
	for _, h := range hits {
		if seen[h.FileID] || n == limit {
			continue
		}
		seen[h.FileID] = true
		n++
		text := strings.Join(strings.Fields(h.Text), " ")
		if len(text) > 300 {
			text = string(trimPartialRune([]byte(text[:300]))) + "…"
		}
		fmt.Fprintf(&b, "%d. %s (file %s): %s\n", n, h.FileName, h.FileID, text)
	}
	if n == 0 {
		return fmt.Sprintf("No file of this workspace mentions %q.", a.Query), nil
	}
	return strings.TrimSpace(b.String()), nil
}

func getFileInfo(a infoArgs) (string, error) {
	it, err := files.Info(a.File, true)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(describe(it) + "\n")
	if it.Description != "" {
		b.WriteString("description: " + it.Description + "\n")
	}
	fmt.Fprintf(&b, "created %s, updated %s\n", it.CreatedAt.Format("2006-01-02 15:04"), it.UpdatedAt.Format("2006-01-02 15:04"))
	if len(it.Versions) > 0 {
		b.WriteString("versions (newest first):\n")
		for _, v := range it.Versions {
			fmt.Fprintf(&b, "  %d: %d bytes, %s, %s\n", v.Version, v.Size, v.CreatedAt.Format("2006-01-02 15:04"), v.Note)
		}
	}
	for _, x := range it.Proposals {
		fmt.Fprintf(&b, "proposed edit %s on version %d awaits the user's decision: %s\n", x.ID, x.BaseVersion, x.Description)
	}
	return strings.TrimSpace(b.String()), nil
}

// readText reads a whole text file for editing.
func readText(ref string) (files.File, string, error) {
	f, err := files.Read(ref, 8<<20)
	if err != nil {
		return files.File{}, "", err
	}
	if f.Truncated {
		return files.File{}, "", pdk.Errorf("too_large", "%s has %d bytes; text edits handle at most 8 MiB", f.Name, f.Size)
	}
	if !isText(f.Data, false) {
		return files.File{}, "", pdk.Errorf("binary_file", "%s (%s) is not a text file, so it cannot be edited as text", f.Name, f.MIMEType)
	}
	return f, string(f.Data), nil
}

// lineOf is the 1-based line of byte offset i.
func lineOf(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// matches finds old in s: its count and the lines of the first few.
func matches(s, old string) (int, []int) {
	var lines []int
	n := 0
	for i := 0; ; {
		j := strings.Index(s[i:], old)
		if j < 0 {
			break
		}
		n++
		if len(lines) < 10 {
			lines = append(lines, lineOf(s, i+j))
		}
		i += j + len(old)
	}
	return n, lines
}

// replaceOnce replaces old by new in s when it occurs exactly once (or
// every occurrence with all), else says what is wrong.
func replaceOnce(name, s, old, repl string, all bool) (string, int, error) {
	n, lines := matches(s, old)
	switch {
	case n == 0:
		return "", 0, pdk.Errorf("no_match", "%q does not occur in %s (nothing changed); read the file again and copy the text exactly", clip(old), name)
	case n > 1 && !all:
		return "", 0, pdk.Errorf("several_matches", "%q occurs %d times in %s (lines %s); nothing changed: include more context so it matches once, or set all",
			clip(old), n, name, joinInts(lines))
	}
	if all {
		return strings.ReplaceAll(s, old, repl), n, nil
	}
	return strings.Replace(s, old, repl, 1), 1, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return string(trimPartialRune([]byte(s[:80]))) + "…"
	}
	return s
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

func replaceInFile(a replaceArgs) (string, error) {
	f, s, err := readText(a.File)
	if err != nil {
		return "", err
	}
	if a.BaseVersion != 0 && a.BaseVersion != f.Version {
		return "", pdk.Errorf("conflict", "%s is at version %d, and you read version %d: read it again", f.Name, f.Version, a.BaseVersion)
	}
	out, n, err := replaceOnce(f.Name, s, a.Old, a.New, a.All)
	if err != nil {
		return "", err
	}
	// The version read is the base: a change by someone else in between is
	// refused by the host, never overwritten.
	c, err := files.Overwrite(f.FileID, []byte(out), f.Version)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Replaced %d occurrence(s) in %s: now version %d; version %d is kept.", n, c.File.Name, c.Version.Version, f.Version)
	if c.Warning != "" {
		msg += "\nwarning: " + c.Warning
	}
	return msg, nil
}

func applyFileEdit(a applyArgs) (string, error) {
	if (len(a.Edits) == 0) == (a.Content == "") {
		return "", pdk.Errorf("invalid_arguments", "give either edits or content")
	}
	f, s, err := readText(a.File)
	if err != nil {
		return "", err
	}
	base := f.Version
	if a.BaseVersion != 0 && a.BaseVersion != base {
		return "", pdk.Errorf("conflict", "%s is at version %d, and the edit was made on version %d: read it again", f.Name, base, a.BaseVersion)
	}
	next := a.Content
	if len(a.Edits) > 0 {
		next = s
		for i, e := range a.Edits {
			if next, _, err = replaceOnce(f.Name, next, e.Old, e.New, false); err != nil {
				var pe *pdk.Error
				if errors.As(err, &pe) {
					return "", pdk.Errorf(pe.Code, "edit %d of %d: %s", i+1, len(a.Edits), pe.Message)
				}
				return "", err
			}
		}
	}
	p, err := files.Propose(f.FileID, next, base, a.Description)
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("Proposed edit %s to %s (file %s, on version %d). The user accepts or rejects it; the file is unchanged until then.\n%s",
		p.ID, f.Name, f.FileID, base, p.Diff)
	if p.Warning != "" {
		out += "\nwarning: " + p.Warning
	}
	return out, nil
}

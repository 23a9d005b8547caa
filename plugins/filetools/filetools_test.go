//go:build !wasip1

package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/workflows"
)

// TestReadOnlyFlags: the tools that only look are read-only (they may run
// in parallel, and the host refuses their writes); the others are not.
func TestReadOnlyFlags(t *testing.T) {
	e := newEnv(t, nil)
	want := map[string]bool{"listFiles": true, "readFile": true, "searchFiles": true, "getFileInfo": true,
		"writeFile": false, "moveFile": false, "tagFile": false, "replaceInFile": false, "applyFileEdit": false}
	seen := 0
	for _, ti := range e.host.Tools() {
		ro, ok := want[ti.Name]
		if !ok {
			continue
		}
		seen++
		if ti.ReadOnly != ro {
			t.Errorf("%s: readOnly %v, want %v", ti.Name, ti.ReadOnly, ro)
		}
	}
	if seen != len(want) {
		t.Fatalf("%d of %d tools loaded", seen, len(want))
	}
}

func TestListReadWriteMoveTag(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	reports, err := e.svc.CreateFolder(ctx, e.p, filemeta.Folder{WorkspaceID: e.ws, Name: "Reports"})
	if err != nil {
		t.Fatal(err)
	}
	y2024, err := e.svc.CreateFolder(ctx, e.p, filemeta.Folder{WorkspaceID: e.ws, ParentID: reports.ID, Name: "2024"})
	if err != nil {
		t.Fatal(err)
	}
	notes := e.upload(t, e.p, e.ws, "notes.md", "# Notes\nfirst line\n", "draft")
	e.upload(t, e.p, e.ws, "data.csv", "a,b\n1,2\n")
	e.upload(t, e.p, e.ws2, "elsewhere.md", "in another workspace")

	t.Run("listFiles filters", func(t *testing.T) {
		all := text(t, e.call(t, "listFiles", map[string]any{}))
		if !strings.Contains(all, "notes.md (file "+notes.ID) || !strings.Contains(all, "data.csv") || strings.Contains(all, "elsewhere.md") {
			t.Fatalf("all: %s", all)
		}
		for _, c := range []struct {
			args      map[string]any
			has, nots string
		}{
			{map[string]any{"tags": []string{"draft"}}, "notes.md", "data.csv"},
			{map[string]any{"mimeType": "text/csv"}, "data.csv", "notes.md"},
			{map[string]any{"name": "*.MD"}, "notes.md", "data.csv"},
			{map[string]any{"folder": "/"}, "notes.md", "2024"},
		} {
			got := text(t, e.call(t, "listFiles", c.args))
			if !strings.Contains(got, c.has) || strings.Contains(got, c.nots) {
				t.Errorf("%v: %s", c.args, got)
			}
		}
		if got := text(t, e.call(t, "listFiles", map[string]any{"folder": "Reports/2024"})); got != "No files match." {
			t.Errorf("empty folder: %s", got)
		}
	})

	t.Run("writeFile create into a folder, then readFile", func(t *testing.T) {
		out := text(t, e.call(t, "writeFile", map[string]any{"name": "plan.md", "content": "step one\n", "folder": "Reports/2024"}))
		if !strings.Contains(out, "documentList ref: docItem:") || !strings.Contains(out, "folder: Reports/2024") {
			t.Fatalf("create: %s", out)
		}
		ref := regexp.MustCompile(`docItem:[0-9a-f-]+`).FindString(out)
		got := text(t, e.call(t, "readFile", map[string]any{"file": ref}))
		if !strings.Contains(got, "plan.md") || !strings.Contains(got, "version 1") || !strings.HasSuffix(got, "step one\n") {
			t.Fatalf("read: %s", got)
		}
		listed := text(t, e.call(t, "listFiles", map[string]any{"folder": y2024.ID}))
		if !strings.Contains(listed, "plan.md") || !strings.Contains(listed, "folder Reports/2024") {
			t.Fatalf("listed: %s", listed)
		}
	})

	t.Run("overwrite and append are versions; getFileInfo lists them", func(t *testing.T) {
		out := text(t, e.call(t, "writeFile", map[string]any{"name": "notes.md", "mode": "overwrite", "content": "# Notes\nrewritten\n", "baseVersion": 1}))
		if !strings.Contains(out, "now version 2") {
			t.Fatalf("overwrite: %s", out)
		}
		out = text(t, e.call(t, "writeFile", map[string]any{"file": notes.ID, "mode": "append", "content": "more\n"}))
		if !strings.Contains(out, "now version 3") {
			t.Fatalf("append: %s", out)
		}
		if _, s := e.current(t, notes.ID); s != "# Notes\nrewritten\nmore\n" {
			t.Fatalf("content: %q", s)
		}
		info := text(t, e.call(t, "getFileInfo", map[string]any{"file": notes.ID}))
		for _, want := range []string{"version 3", "3: ", "2: ", "1: ", "upload", "writeFile", "tags draft"} {
			if !strings.Contains(info, want) {
				t.Errorf("info lacks %q: %s", want, info)
			}
		}
		versions := events[workflows.FileVersionData](t, e, workflows.EventFileVersion)
		if len(versions) != 2 || versions[1].FileID != notes.ID || versions[1].Version != 3 {
			t.Fatalf("fileVersion events: %+v", versions)
		}
	})

	t.Run("moveFile and tagFile", func(t *testing.T) {
		out := text(t, e.call(t, "moveFile", map[string]any{"file": notes.ID, "folder": "Reports", "newName": "notes-2024.md"}))
		if !strings.Contains(out, "notes-2024.md") || !strings.Contains(out, "folder Reports") {
			t.Fatalf("move: %s", out)
		}
		out = text(t, e.call(t, "tagFile", map[string]any{"file": notes.ID, "add": []string{"final"}, "remove": []string{"draft"}}))
		if !strings.Contains(out, "tags final") || strings.Contains(out, "draft") {
			t.Fatalf("tag: %s", out)
		}
		out = text(t, e.call(t, "moveFile", map[string]any{"file": notes.ID, "folder": "/"}))
		if strings.Contains(out, "folder") {
			t.Fatalf("move to the root: %s", out)
		}
	})

	t.Run("readFile pages a large text file", func(t *testing.T) {
		body := strings.Repeat("0123456789abcdef", 4000) // 64000 bytes
		big := e.upload(t, e.p, e.ws, "big.txt", body)
		first := text(t, e.call(t, "readFile", map[string]any{"file": big.ID, "maxBytes": 1000}))
		if !strings.Contains(first, "bytes 0-1000 of 64000") || !strings.Contains(first, "offset 1000]") {
			t.Fatalf("first page: %.200s", first)
		}
		last := text(t, e.call(t, "readFile", map[string]any{"file": big.ID, "offset": 63500, "maxBytes": 1000}))
		if !strings.Contains(last, "bytes 63500-64000 of 64000") || strings.Contains(last, "more:") {
			t.Fatalf("last page: %.200s", last)
		}
	})

	t.Run("a binary document is read as its extracted text, or refused clearly", func(t *testing.T) {
		pdf := e.upload(t, e.p, e.ws, "scan.pdf", "%PDF-1.7\n\x00\x01\x02binary")
		msg := failed(t, e.call(t, "readFile", map[string]any{"file": pdf.ID}))
		if !strings.Contains(msg, "binary_file") || !strings.Contains(msg, "not a text file") {
			t.Fatalf("unindexed binary: %s", msg)
		}
		e.indexed(t, pdf, "Quarterly revenue grew by twelve percent.", "Costs fell.")
		got := text(t, e.call(t, "readFile", map[string]any{"file": pdf.ID}))
		if !strings.Contains(got, "extracted text") || !strings.Contains(got, "[page 1] Quarterly revenue") || !strings.Contains(got, "Costs fell.") {
			t.Fatalf("extracted: %s", got)
		}
		found := text(t, e.call(t, "searchFiles", map[string]any{"query": "quarterly revenue"}))
		if !strings.Contains(found, "1. scan.pdf (file "+pdf.ID+")") {
			t.Fatalf("search: %s", found)
		}
	})
}

// TestReplaceInFile: exactly one match changes the file (a new version);
// no match, several matches and a stale version change nothing.
func TestReplaceInFile(t *testing.T) {
	e := newEnv(t, nil)
	f := e.upload(t, e.p, e.ws, "config.txt", "port=80\nhost=a\nport=80\n")
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"no match", map[string]any{"file": f.ID, "old": "port=8080", "new": "x"}, "no_match"},
		{"several matches", map[string]any{"file": f.ID, "old": "port=80", "new": "port=81"}, "occurs 2 times in config.txt (lines 1, 3)"},
		{"edit in a later edit", map[string]any{"file": f.ID, "old": "host=a", "new": "host=b", "baseVersion": 7}, "conflict"},
	} {
		msg := failed(t, e.call(t, "replaceInFile", c.args))
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, "") {
			t.Errorf("%s: %s", c.name, msg)
		}
		if it, _ := e.current(t, f.ID); it.Version != 1 {
			t.Fatalf("%s changed the file: version %d", c.name, it.Version)
		}
	}
	out := text(t, e.call(t, "replaceInFile", map[string]any{"file": f.ID, "old": "host=a", "new": "host=b"}))
	if !strings.Contains(out, "now version 2") {
		t.Fatalf("replace: %s", out)
	}
	out = text(t, e.call(t, "replaceInFile", map[string]any{"file": f.ID, "old": "port=80", "new": "port=81", "all": true}))
	if !strings.Contains(out, "Replaced 2 occurrence(s)") {
		t.Fatalf("replace all: %s", out)
	}
	if _, s := e.current(t, f.ID); s != "port=81\nhost=b\nport=81\n" {
		t.Fatalf("content: %q", s)
	}
}

// TestApplyFileEdit: a proposal carries the host's diff, changes nothing
// until decided, and is announced to the workflow.
func TestApplyFileEdit(t *testing.T) {
	e := newEnv(t, nil)
	f := e.upload(t, e.p, e.ws, "readme.md", "# Title\nold text\n")
	out := text(t, e.call(t, "applyFileEdit", map[string]any{"file": f.ID, "edits": []map[string]string{{"old": "old text", "new": "new text"}},
		"description": "freshen the text"}))
	if !strings.Contains(out, "-old text\n+new text") || !strings.Contains(out, "unchanged until then") {
		t.Fatalf("proposal: %s", out)
	}
	if it, _ := e.current(t, f.ID); it.Version != 1 {
		t.Fatalf("a proposal changed the file: %+v", it)
	}
	props := events[workflows.FileEditProposalData](t, e, workflows.EventFileEditProposal)
	if len(props) != 1 || props[0].FileID != f.ID || props[0].Description != "freshen the text" || !strings.Contains(props[0].Diff, "+new text") ||
		props[0].BaseVersion != 1 {
		t.Fatalf("fileEditProposal events: %+v", props)
	}
	info := text(t, e.call(t, "getFileInfo", map[string]any{"file": f.ID}))
	if !strings.Contains(info, "proposed edit "+props[0].ProposalID) {
		t.Fatalf("info: %s", info)
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"neither edits nor content", map[string]any{"file": f.ID}, "either edits or content"},
		{"an edit that does not match", map[string]any{"file": f.ID, "edits": []map[string]string{{"old": "absent", "new": "x"}}}, "edit 1"},
		{"no change", map[string]any{"file": f.ID, "content": "# Title\nold text\n"}, "same as version 1"},
		{"on a version the file has not", map[string]any{"file": f.ID, "content": "x\n", "baseVersion": 3}, "conflict"},
	} {
		if msg := failed(t, e.call(t, "applyFileEdit", c.args)); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %s", c.name, msg)
		}
	}
	if list, _ := e.svc.Proposals(context.Background(), e.p, f.ID); len(list) != 1 {
		t.Fatalf("refused proposals were stored: %d", len(list))
	}
}

//go:build !wasip1

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files/filemeta"
)

// fileCount is how many files the workspace holds, as its user sees them.
func (e *env) fileCount(t *testing.T) int {
	t.Helper()
	page, err := e.svc.List(context.Background(), e.p, filemeta.Filter{WorkspaceID: e.ws, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Items)
}

// TestBadInput: hostile or mistaken arguments get a clear error and change
// nothing.
func TestBadInput(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.svc.CreateFolder(ctx, e.p, filemeta.Folder{WorkspaceID: e.ws, Name: "Reports"}); err != nil {
		t.Fatal(err)
	}
	other, err := e.svc.CreateFolder(ctx, e.p, filemeta.Folder{WorkspaceID: e.ws2, Name: "Elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	f := e.upload(t, e.p, e.ws, "doc.txt", "hello\n")
	pdf := e.upload(t, e.p, e.ws, "doc.pdf", "%PDF-1.7\n\x00\x01binary")
	before := e.fileCount(t)
	big := strings.Repeat("x", maxUpload+1)

	for _, c := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"traversal in a name", "writeFile", map[string]any{"name": "../../etc/passwd", "content": "x"}, "path separator"},
		{"a name that is a relative element", "writeFile", map[string]any{"name": "..", "content": "x"}, "relative path element"},
		{"a path as a name", "writeFile", map[string]any{"name": "Reports/x.txt", "content": "x"}, "path separator"},
		{"a control character in a name", "writeFile", map[string]any{"name": "a\x00b.txt", "content": "x"}, "control character"},
		{"traversal in a folder", "listFiles", map[string]any{"folder": "Reports/../.."}, "relative path element"},
		{"traversal in a move", "moveFile", map[string]any{"file": f.ID, "folder": "../Reports"}, "relative path element"},
		{"an empty folder element", "moveFile", map[string]any{"file": f.ID, "folder": "Reports//x"}, "empty"},
		{"another workspace's folder", "moveFile", map[string]any{"file": f.ID, "folder": other.ID}, "not_found"},
		{"a new file into a folder that is not there", "writeFile", map[string]any{"name": "x.txt", "content": "x", "folder": "Reports/Nope"}, "no folder \"Nope\""},
		{"a new file into another workspace's folder", "writeFile", map[string]any{"name": "x.txt", "content": "x", "folder": other.ID}, "not_found"},
		{"a new file over the size limit", "writeFile", map[string]any{"name": "big.txt", "content": big}, "exceeds the limit"},
		{"an overwrite over the size limit", "writeFile", map[string]any{"file": f.ID, "mode": "overwrite", "content": big}, "exceeds the limit"},
		{"an append over the size limit", "writeFile", map[string]any{"file": f.ID, "mode": "append", "content": big[:maxUpload-3]}, "exceeds the limit"},
		{"a proposal over the size limit", "applyFileEdit", map[string]any{"file": f.ID, "content": big}, "limit"},
		{"overwriting a document with text", "writeFile", map[string]any{"file": pdf.ID, "mode": "overwrite", "content": "text"}, "not a text file"},
		{"replacing in a document", "replaceInFile", map[string]any{"file": pdf.ID, "old": "PDF", "new": "x"}, "not a text file"},
		{"proposing an edit of a document", "applyFileEdit", map[string]any{"file": pdf.ID, "content": "x"}, "not a text file"},
		{"overwrite without a file", "writeFile", map[string]any{"mode": "overwrite", "content": "x"}, "needs the file"},
		{"overwrite of a name nobody has", "writeFile", map[string]any{"name": "ghost.txt", "mode": "overwrite", "content": "x"}, "no file is named"},
		{"a file reference that is a path", "readFile", map[string]any{"file": "../../etc/passwd"}, "neither an id"},
		{"a docList where one file is meant", "readFile", map[string]any{"file": "docList:upload"}, "several documents"},
		{"a docItem not of this workflow", "readFile", map[string]any{"file": "docItem:0192f1a0-7b3c-7def-8a12-3456789abcde"}, "not_found"},
		{"an unknown file id", "getFileInfo", map[string]any{"file": "nope"}, "not_found"},
		{"a tag with a comma", "tagFile", map[string]any{"file": f.ID, "add": []string{"a,b"}}, "comma"},
		{"tagFile without tags", "tagFile", map[string]any{"file": f.ID}, "give tags"},
		{"an offset past the end", "readFile", map[string]any{"file": f.ID, "offset": 1000}, "past the end"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := failed(t, e.call(t, c.tool, c.args))
			if !strings.Contains(msg, c.want) {
				t.Errorf("%s: %s, want %q", c.tool, msg, c.want)
			}
		})
	}
	if n := e.fileCount(t); n != before {
		t.Fatalf("refused calls stored files: %d, was %d", n, before)
	}
	if it, s := e.current(t, f.ID); it.Version != 1 || s != "hello\n" || it.FolderID != "" || len(it.Tags) != 0 {
		t.Fatalf("refused calls changed the file: %+v %q", it, s)
	}
	if it, _ := e.current(t, pdf.ID); it.Version != 1 {
		t.Fatalf("refused calls changed the document: %+v", it)
	}
	if list, _ := e.svc.Proposals(ctx, e.p, f.ID); len(list) != 0 {
		t.Fatalf("refused proposals stored: %+v", list)
	}
}

// TestConcurrentEdits: a change made on version N when the file is at N+1
// is refused and says so; nothing is overwritten.
func TestConcurrentEdits(t *testing.T) {
	e := newEnv(t, nil)
	f := e.upload(t, e.p, e.ws, "shared.txt", "line one\nline two\n")
	// Someone else changes the file after the agent read version 1.
	if _, _, err := e.svc.SetContent(context.Background(), e.p, f.ID, strings.NewReader("line one\nline 2\n"), 1, "by hand"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"writeFile", map[string]any{"file": f.ID, "mode": "overwrite", "content": "agent's text\n", "baseVersion": 1}},
		{"writeFile", map[string]any{"file": f.ID, "mode": "append", "content": "more\n", "baseVersion": 1}},
		{"replaceInFile", map[string]any{"file": f.ID, "old": "line one", "new": "line 1", "baseVersion": 1}},
		{"applyFileEdit", map[string]any{"file": f.ID, "content": "proposed\n", "baseVersion": 1}},
	} {
		msg := failed(t, e.call(t, c.tool, c.args))
		if !strings.Contains(msg, "conflict") || !strings.Contains(msg, "version 2") || !strings.Contains(msg, "version 1") {
			t.Errorf("%s on a stale version: %s", c.tool, msg)
		}
	}
	if it, s := e.current(t, f.ID); it.Version != 2 || s != "line one\nline 2\n" {
		t.Fatalf("stale edits changed the file: %+v %q", it, s)
	}
}

// TestOtherUsersFiles: a tool acts for its caller in the caller's workspace:
// a colleague's file is read-only to a member, another workspace's file is
// not there, another tenant's does not exist.
func TestOtherUsersFiles(t *testing.T) {
	e := newEnv(t, nil)
	mine := e.upload(t, e.p, e.ws, "mine.txt", "mine\n")
	inWS2 := e.upload(t, e.p, e.ws2, "second.txt", "second\n")
	eves := e.upload(t, e.eve, e.evWS, "eve.txt", "eve's\n")

	// Bob, a member of the workspace, reads but may not change p's file.
	if got := text(t, e.callAs(t, e.bob, e.ws, "readFile", map[string]any{"file": mine.ID})); !strings.HasSuffix(got, "mine\n") {
		t.Fatalf("bob reads: %s", got)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"writeFile", map[string]any{"file": mine.ID, "mode": "overwrite", "content": "bob's\n"}},
		{"replaceInFile", map[string]any{"file": mine.ID, "old": "mine", "new": "bob's"}},
		{"applyFileEdit", map[string]any{"file": mine.ID, "content": "bob's\n"}},
		{"moveFile", map[string]any{"file": mine.ID, "folder": "/", "newName": "bob.txt"}},
		{"tagFile", map[string]any{"file": mine.ID, "add": []string{"bob"}}},
	} {
		if msg := failed(t, e.callAs(t, e.bob, e.ws, c.tool, c.args)); !strings.Contains(msg, "forbidden") {
			t.Errorf("bob's %s: %s", c.tool, msg)
		}
	}
	// A file of the user's other workspace is not in this one.
	for _, tool := range []string{"readFile", "getFileInfo", "replaceInFile", "tagFile"} {
		args := map[string]any{"file": inWS2.ID, "old": "second", "new": "x", "add": []string{"x"}}
		switch tool {
		case "readFile", "getFileInfo":
			args = map[string]any{"file": inWS2.ID}
		case "replaceInFile":
			delete(args, "add")
		case "tagFile":
			args = map[string]any{"file": inWS2.ID, "add": []string{"x"}}
		}
		if msg := failed(t, e.call(t, tool, args)); !strings.Contains(msg, "not in this workspace") && !strings.Contains(msg, "not_found") {
			t.Errorf("%s of another workspace's file: %s", tool, msg)
		}
	}
	if got := text(t, e.call(t, "listFiles", map[string]any{})); strings.Contains(got, "second.txt") {
		t.Fatalf("another workspace's file listed: %s", got)
	}
	// Another tenant's file does not exist for p, nor p's for eve.
	if msg := failed(t, e.call(t, "readFile", map[string]any{"file": eves.ID})); !strings.Contains(msg, "not_found") {
		t.Errorf("another tenant's file: %s", msg)
	}
	if msg := failed(t, e.callAs(t, e.eve, e.evWS, "readFile", map[string]any{"file": mine.ID})); !strings.Contains(msg, "not_found") {
		t.Errorf("eve reads p's file: %s", msg)
	}
	if got := text(t, e.callAs(t, e.eve, e.evWS, "listFiles", map[string]any{})); strings.Contains(got, "mine.txt") {
		t.Fatalf("eve lists p's file: %s", got)
	}
	if it, s := e.current(t, mine.ID); it.Version != 1 || s != "mine\n" || it.Name != "mine.txt" || len(it.Tags) != 0 {
		t.Fatalf("p's file changed: %+v %q", it, s)
	}
}

// TestNoCaller: a call that runs for nobody reaches no file.
func TestNoCaller(t *testing.T) {
	e := newEnv(t, nil)
	res := e.host.Call(context.Background(), "listFiles", []byte(`{}`), nil)
	if msg := failed(t, res); !strings.Contains(msg, "no_caller") {
		t.Fatalf("no caller: %s", msg)
	}
}

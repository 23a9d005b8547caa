package connections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/connections/fakes/graph"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// uploadWorld is the connection tools over the fake Graph, with a
// workspace to upload from.
type uploadWorld struct {
	w    *connectionstest.Agent
	m    *msWorld
	h    *wasm.Host
	conn string
}

func newUploadWorld(t testing.TB) *uploadWorld {
	t.Helper()
	w := connectionstest.NewAgent(t, "up")
	m := newMSWorld(t, w.DB)
	conn := m.connect(t, w.P, "work")
	toolsCap := &connections.ToolsCapability{}
	h := m.host(t, nil, []wasm.Capability{w.FileBridge(), toolsCap.Wasm()}, "connections")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: m.svc}
	return &uploadWorld{w: w, m: m, h: h, conn: conn.ID}
}

// file stores data in the workspace and returns its id.
func (u *uploadWorld) file(t testing.TB, name string, data []byte) string {
	t.Helper()
	it, _, err := u.w.Files.Upload(u.w.Context(), u.w.P, files.Upload{WorkspaceID: u.w.Workspace, Name: name, Content: bytes.NewReader(data), NoDedupe: true})
	if err != nil {
		t.Fatal(err)
	}
	return it.ID
}

func (u *uploadWorld) upload(t testing.TB, service, path, file, conflict string) wasm.Result {
	t.Helper()
	a := map[string]any{"connection": u.conn, "service": service, "path": path, "file": file}
	if conflict != "" {
		a["conflict"] = conflict
	}
	b, _ := json.Marshal(a)
	return u.h.Call(u.w.Context(), "externalUpload", b, &wasm.CallOptions{Tenant: u.w.P.TenantID})
}

func noise(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestUploadLargeToGraph: files over one files.read (16 MiB) upload
// whole, byte for byte, read from the workspace in ranged pages; one byte
// over the limit is refused before Graph is reached. Before, 16 MiB + 1
// byte answered too_large.
func TestUploadLargeToGraph(t *testing.T) {
	cases := []struct {
		name string
		size int
		fail int // the fragment that fails, 0 for none
	}{
		{"16MiB+1", 16<<20 + 1, 0},
		{"32MiB", 32 << 20, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := newUploadWorld(t)
			data := noise(c.size)
			id := u.file(t, "big.bin", data)
			if c.fail > 0 {
				u.m.graph.FailFragment(c.fail)
			}
			res := u.upload(t, "sharepoint", spHost+"/sites/Marketing/Archive", id, "")
			if !res.OK || !strings.Contains(res.Text, `uploaded "big.bin"`) {
				t.Fatalf("externalUpload: %+v %+v", res, res.Error)
			}
			ups := u.m.graph.Uploads()
			if len(ups) != 1 || !bytes.Equal(ups[0].Content, data) {
				t.Fatalf("Graph stored %d uploads (want 1 of %d bytes, byte for byte)", len(ups), len(data))
			}
		})
	}
	t.Run("over the limit", func(t *testing.T) {
		u := newUploadWorld(t)
		id := u.file(t, "huge.bin", noise(32<<20+1))
		res := u.upload(t, "sharepoint", spHost+"/sites/Marketing/Archive", id, "")
		if res.OK || res.Error == nil || !strings.Contains(res.Error.Error(), "too_large") {
			t.Fatalf("32 MiB + 1: %+v %+v", res, res.Error)
		}
		if n, _ := u.m.graph.SessionUploads(); n != 0 || len(u.m.graph.Uploads()) != 0 {
			t.Fatalf("a refused upload reached Graph")
		}
	})
}

// TestUploadConflictGraph: the three conflict policies on a name that
// exists, for a simple upload and an upload session alike: fail changes
// nothing ("exists"), replace gives the file new content, rename stores
// "name (1).ext" (Graph's own rename would say "name 1.ext").
func TestUploadConflictGraph(t *testing.T) {
	for _, size := range []int{1000, 5 << 20} {
		for _, c := range []struct {
			policy, wantName string
			ok               bool
		}{{"", "", false}, {"fail", "", false}, {"replace", "a-notes.txt", true}, {"rename", "a-notes (1).txt", true}} {
			t.Run(fmt.Sprintf("%d/%s", size, c.policy), func(t *testing.T) {
				u := newUploadWorld(t)
				data := noise(size)
				res := u.upload(t, "sharepoint", spHost+"/sites/Marketing/Documents/Reports", u.file(t, "a-notes.txt", data), c.policy)
				ups := u.m.graph.Uploads()
				if !c.ok {
					if res.OK || res.Error == nil || res.Error.Code != "exists" || len(ups) != 0 {
						t.Fatalf("conflict=%q: %+v %+v, %d stored", c.policy, res, res.Error, len(ups))
					}
					return
				}
				if !res.OK || !strings.Contains(res.Text, fmt.Sprintf("uploaded %q", c.wantName)) {
					t.Fatalf("conflict=%s: %+v %+v", c.policy, res, res.Error)
				}
				if len(ups) != 1 || ups[0].Name != c.wantName || !bytes.Equal(ups[0].Content, data) {
					t.Fatalf("conflict=%s: Graph stored %+v", c.policy, ups)
				}
			})
		}
	}
	t.Run("unknown policy", func(t *testing.T) {
		u := newUploadWorld(t)
		res := u.upload(t, "sharepoint", spHost+"/sites/Marketing/Documents/Reports", u.file(t, "x.txt", []byte("x")), "merge")
		if res.OK || len(u.m.graph.Uploads()) != 0 {
			t.Fatalf("conflict=merge: %+v", res)
		}
	})
}

var _ = graph.FragmentMultiple

// TestUploadDriveResumed: a resumable upload to Drive goes in chunks of
// 256 KiB multiples (the fake refuses others); a chunk cut halfway is
// resumed after a status query (Content-Range: bytes */total) from the
// byte after the Range Google answers. Before, the bytes went in one PUT
// and a failure ended the upload.
func TestUploadDriveResumed(t *testing.T) {

	ge := newGoogleEnv(t, "")
	data := noise(20<<20 + 333)
	ge.g.FailChunk(2)
	up, err := ge.resolver.Upload(context.Background(), ge.alice, wire.UploadRequest{Connection: ge.conn.ID, Service: "drive", Path: "/Finanzen", Name: "big.bin", Data: data})
	if err != nil || up.Size != int64(len(data)) {
		t.Fatalf("upload: %+v %v", up, err)
	}
	ups := ge.g.Uploads()
	if len(ups) != 1 || !bytes.Equal(ups[0].Content, data) {
		t.Fatalf("Drive stored %d uploads, want the file byte for byte", len(ups))
	}
	if n := ge.g.Chunks(); n < 4 {
		t.Fatalf("%d PUTs to the session: not chunked and resumed", n)
	}
}

// TestUploadConflictDrive: Drive keeps files of one name apart, so the
// connector applies the policy: fail refuses, replace updates the one
// file of that name (files.update, same id), rename stores "name (1).ext".
func TestUploadConflictDrive(t *testing.T) {
	for _, size := range []int{100, 6 << 20} {
		for _, c := range []struct {
			policy, wantName string
			ok               bool
		}{{"", "", false}, {"fail", "", false}, {"replace", "note-1.txt", true}, {"rename", "note-1 (1).txt", true}} {
			t.Run(fmt.Sprintf("%d/%s", size, c.policy), func(t *testing.T) {
				ge := newGoogleEnv(t, "")
				data := noise(size)
				up, err := ge.resolver.Upload(context.Background(), ge.alice, wire.UploadRequest{Connection: ge.conn.ID, Service: "drive", Path: "/Finanzen",
					Name: "note-1.txt", Data: data, Conflict: c.policy})
				ups := ge.g.Uploads()
				if !c.ok {
					if err == nil || !strings.Contains(err.Error(), "exists") || len(ups) != 0 {
						t.Fatalf("conflict=%q: %+v %v, %d stored", c.policy, up, err, len(ups))
					}
					return
				}
				if err != nil || up.Name != c.wantName || up.Path != "/Finanzen/"+c.wantName {
					t.Fatalf("conflict=%s: %+v %v", c.policy, up, err)
				}
				if len(ups) != 1 || ups[0].Name != c.wantName || !bytes.Equal(ups[0].Content, data) {
					t.Fatalf("conflict=%s: Drive stored %d", c.policy, len(ups))
				}
				l, err := ge.browse("/Finanzen", 100, "")
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, e := range l.Entries {
					if e.Name == "note-1.txt" {
						n++
					}
				}
				if n != 1 {
					t.Fatalf("conflict=%s: %d files called note-1.txt", c.policy, n)
				}
			})
		}
	}
}

// TestUploadConflictJira: an issue keeps attachments of one name apart
// (Jira allows duplicates), so the connector applies the policy: fail
// refuses, rename attaches "name (1).ext", replace attaches the file and
// deletes the older attachment of that name.
func TestUploadConflictJira(t *testing.T) {
	for _, c := range []struct {
		policy string
		want   []string // the issue's attachment names after
		ok     bool
	}{{"", []string{"camlidl.pdf"}, false}, {"fail", []string{"camlidl.pdf"}, false},
		{"replace", []string{"camlidl.pdf"}, true}, {"rename", []string{"camlidl.pdf", "camlidl (1).pdf"}, true}} {
		t.Run(c.policy, func(t *testing.T) {
			je := newJiraEnv(t)
			tg := target(je.conn, "issues")
			before := je.site.Issue("PROJ-1").Attachments
			_, err := je.resolver.Upload(context.Background(), je.alice, wire.UploadRequest{Connection: tg.Connection, Service: tg.Service, Path: "PROJ-1",
				Name: "camlidl.pdf", MIMEType: "application/pdf", Data: []byte("new"), Conflict: c.policy})
			if c.ok != (err == nil) || (!c.ok && !strings.Contains(err.Error(), "exists")) {
				t.Fatalf("conflict=%q: %v", c.policy, err)
			}
			after := je.site.Issue("PROJ-1").Attachments
			var names []string
			for _, a := range after {
				names = append(names, a.Filename)
			}
			if fmt.Sprint(names) != fmt.Sprint(c.want) {
				t.Fatalf("conflict=%q: attachments %v, want %v", c.policy, names, c.want)
			}
			if c.policy == "replace" && (after[0].ID == before[0].ID || string(after[0].Content) != "new") {
				t.Fatalf("replace kept the old attachment")
			}
		})
	}
}

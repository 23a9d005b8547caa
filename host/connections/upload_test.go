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
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/wasmtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// uploadWorld is the connection tools over the fake Graph, with a
// workspace to upload from.
type uploadWorld struct {
	w     *connectionstest.Agent
	m     *msWorld
	h     *wasm.Host
	tools *connections.ToolsCapability
	conn  string
}

func newUploadWorld(t testing.TB) *uploadWorld {
	t.Helper()
	w := connectionstest.NewAgent(t, "up")
	m := newMSWorld(t, w.DB)
	conn := m.connect(t, w.P, "work")
	toolsCap := &connections.ToolsCapability{Files: w.Opener()}
	h := m.host(t, nil, []wasm.Capability{w.FileBridge(), toolsCap.Wasm()}, "connections")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: m.svc}
	return &uploadWorld{w: w, m: m, h: h, tools: toolsCap, conn: conn.ID}
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

// TestUploadLargeToGraph: files over the old 32 MiB limit upload whole,
// byte for byte, through an upload session whose fragments the host
// streams from the workspace (the fake Graph refuses fragments that are
// not 320 KiB multiples, a Content-Range that is not exact, and any
// Authorization header on the uploadUrl); a failed fragment is resumed
// from the session's nextExpectedRanges; an expired session is opened
// again. Before, 32 MiB + 1 byte answered too_large.
func TestUploadLargeToGraph(t *testing.T) {
	cases := []struct {
		name     string
		size     int
		fail     int // the fragment that fails, 0 for none
		expire   int // the fragment after which the session expires, 0 for none
		sessions int // upload sessions Graph saw
	}{
		{"16MiB+1", 16<<20 + 1, 0, 0, 1},
		{"40MiB+5 with a failed fragment", 40<<20 + 5, 2, 0, 1},
		{"24MiB with the session expiring", 24 << 20, 0, 1, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := newUploadWorld(t)
			data := noise(c.size)
			id := u.file(t, "big.bin", data)
			if c.fail > 0 {
				u.m.graph.FailFragment(c.fail)
			}
			if c.expire > 0 {
				u.m.graph.ExpireSessionAfter(c.expire)
			}
			res := u.upload(t, "sharepoint", spHost+"/sites/Marketing/Archive", id, "")
			if !res.OK || !strings.Contains(res.Text, fmt.Sprintf(`uploaded "big.bin" to %s/sites/Marketing/Archive/big.bin (%d bytes)`, spHost, c.size)) {
				t.Fatalf("externalUpload: %+v %+v", res, res.Error)
			}
			ups := u.m.graph.Uploads()
			if len(ups) != 1 || !bytes.Equal(ups[0].Content, data) {
				t.Fatalf("Graph stored %d uploads (want 1 of %d bytes, byte for byte)", len(ups), len(data))
			}
			if n, frags := u.m.graph.SessionUploads(); n != c.sessions || frags < c.size/(10<<20) {
				t.Fatalf("%d sessions, %d fragments", n, frags)
			}
		})
	}
	t.Run("over the host's limit", func(t *testing.T) {
		u := newUploadWorld(t)
		u.tools.MaxUpload = 1 << 20
		id := u.file(t, "huge.bin", noise(1<<20+1))
		res := u.upload(t, "sharepoint", spHost+"/sites/Marketing/Archive", id, "")
		if res.OK || res.Error == nil || !strings.Contains(res.Error.Error(), "too_large") {
			t.Fatalf("1 MiB + 1 over a 1 MiB limit: %+v %+v", res, res.Error)
		}
		if n, _ := u.m.graph.SessionUploads(); n != 0 || len(u.m.graph.Uploads()) != 0 {
			t.Fatalf("a refused upload reached Graph")
		}
	})
}

// uploadDirect calls a connector plugin's upload tool as the resolver
// does, with data as the running upload, and returns its result (whose
// Stats tell the plugin instance's memory).
func uploadDirect(t *testing.T, plugins connections.Plugins, plugin string, p tenancy.Principal, req wire.UploadRequest, data []byte) wasm.Result {
	t.Helper()
	h, ok := plugins.(*wasm.Host)
	if !ok {
		t.Fatalf("plugins are a %T", plugins)
	}
	req.Size = int64(len(data))
	ctx := connections.WithUpload(toolcall.With(context.Background(), toolcall.Caller{Principal: p}), connections.BytesSource(req.Name, req.MIMEType, data))
	b, _ := json.Marshal(req)
	return wasmtest.Plugin(t, h, plugin).Call(ctx, wire.ToolUpload, b, &wasm.CallOptions{Tenant: p.TenantID})
}

// boundedMemory is what a plugin instance may grow to while it uploads a
// file of 100 MB: far less than the file, so the file cannot have been
// held (before, the connections plugin held it whole and the connector
// held it again in its request).
const boundedMemory = 40 << 20

// TestUploadMemoryBounded: a 100 MB upload to SharePoint leaves both
// plugins' instances small: the connections plugin (externalUpload) and
// the microsoft connector each stay under boundedMemory, since the host
// streams the file from the workspace in the connector's fragments.
func TestUploadMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB")
	}
	u := newUploadWorld(t)
	data := noise(100_000_000)
	res := u.upload(t, "sharepoint", spHost+"/sites/Marketing/Archive", u.file(t, "big.bin", data), "")
	if !res.OK {
		t.Fatalf("externalUpload: %+v %+v", res, res.Error)
	}
	if ups := u.m.graph.Uploads(); len(ups) != 1 || !bytes.Equal(ups[0].Content, data) {
		t.Fatalf("Graph did not store the file byte for byte")
	}
	if res.Stats.MemoryBytes == 0 || res.Stats.MemoryBytes > boundedMemory {
		t.Fatalf("the connections plugin grew to %d bytes for a %d-byte upload", res.Stats.MemoryBytes, len(data))
	}
	direct := uploadDirect(t, u.h, "microsoft", u.w.P, wire.UploadRequest{Connection: u.conn, Service: "sharepoint",
		Path: spHost + "/sites/Marketing/Archive", Name: "again.bin"}, data)
	if !direct.OK {
		t.Fatalf("upload: %+v %+v", direct, direct.Error)
	}
	if direct.Stats.MemoryBytes == 0 || direct.Stats.MemoryBytes > boundedMemory {
		t.Fatalf("the microsoft connector grew to %d bytes for a %d-byte upload", direct.Stats.MemoryBytes, len(data))
	}
	if ups := u.m.graph.Uploads(); len(ups) != 2 || !bytes.Equal(ups[1].Content, data) {
		t.Fatalf("Graph did not store the second upload byte for byte")
	}
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

// TestUploadDriveResumed: a resumable upload to Drive goes in chunks of
// 256 KiB multiples (the fake refuses others), each interim one answered
// 308 Resume Incomplete with its Range; a chunk cut halfway is resumed
// after a status query (Content-Range: bytes */total) from the byte after
// the Range Google answers. Before, connection.Send turned an accepted 308
// into status 0 (the connector sent one PUT per file), and the connector's
// memory held the file twice.
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
	ge.g.FailChunk(3)
	res := uploadDirect(t, ge.resolver.Plugins, "google", ge.alice, wire.UploadRequest{Connection: ge.conn.ID, Service: "drive", Path: "/Finanzen", Name: "again.bin"}, data)
	if !res.OK || res.Stats.MemoryBytes > boundedMemory/2 {
		t.Fatalf("upload: %+v %+v, the connector grew to %d bytes", res, res.Error, res.Stats.MemoryBytes)
	}
	if ups := ge.g.Uploads(); len(ups) != 2 || !bytes.Equal(ups[1].Content, data) {
		t.Fatalf("Drive did not store the second upload byte for byte")
	}
}

// TestUploadJiraLarge: an attachment over the old 32 MiB limit is posted
// as one multipart body the host streams around the file (the connector
// stays small); one over the site's attachment limit (GET
// /rest/api/3/attachment/meta) is refused as too_large before any byte is
// posted. Before, the connector built the body in its memory and the
// site's 413 came after the upload.
func TestUploadJiraLarge(t *testing.T) {
	je := newJiraEnv(t)
	data := noise(40<<20 + 3)
	res := uploadDirect(t, je.resolver.Plugins, "jira", je.alice, wire.UploadRequest{Connection: je.conn.ID, Service: "issues", Path: "PROJ-2",
		Name: "dump.bin", MIMEType: "application/octet-stream"}, data)
	if !res.OK {
		t.Fatalf("upload: %+v %+v", res, res.Error)
	}
	if res.Stats.MemoryBytes > boundedMemory/2 {
		t.Fatalf("the jira connector grew to %d bytes for a %d-byte attachment", res.Stats.MemoryBytes, len(data))
	}
	att := je.site.Issue("PROJ-2").Attachments
	if len(att) != 1 || att[0].Filename != "dump.bin" || !bytes.Equal(att[0].Content, data) {
		t.Fatalf("Jira stored %d attachments, want dump.bin byte for byte", len(att))
	}
	je.site.SetAttachmentLimit(1 << 20)
	before := len(je.site.Requests())
	_, err := je.resolver.Upload(context.Background(), je.alice, wire.UploadRequest{Connection: je.conn.ID, Service: "issues", Path: "PROJ-2",
		Name: "big.bin", Data: noise(1<<20 + 1)})
	if err == nil || !strings.Contains(err.Error(), "too_large") {
		t.Fatalf("over the site's limit: %v", err)
	}
	for _, r := range je.site.Requests()[before:] {
		if strings.HasPrefix(r, "POST") {
			t.Fatalf("the attachment was posted: %s", r)
		}
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

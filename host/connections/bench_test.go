package connections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/connections/connectionstest"
	"github.com/agenthost/agenthost/host/egress"
	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/extract"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/toolcall"
	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/worldtest"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// BenchmarkConnectorEgressOverhead reports connector.egress.overhead.ms:
// what a request with host-attached credentials (load the connection,
// open its sealed secret, attach it, scrub the answer) costs over the
// same request through the same egress client without them, to a loopback
// server; medians of alternating requests.
func BenchmarkConnectorEgressOverhead(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	c := e.connectOAuth(b, e.alice)
	send := e.send()
	hosts := []string{e.apiHost}
	const n = 400
	var plain, withConn []float64
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := send(ctx, egress.Request{URL: e.api.URL + "/", Headers: map[string]string{"Authorization": "Bearer static-token-1"}}); err != nil {
			b.Fatal(err)
		}
		plain = append(plain, figure.Millis(time.Since(t0)))
		t0 = time.Now()
		resp, err := e.svc.Do(ctx, e.alice, c.ID, "acme", hosts, egress.Request{URL: e.api.URL + "/"}, send)
		if err != nil || resp.Status != 200 {
			b.Fatalf("%v %v", resp, err)
		}
		withConn = append(withConn, figure.Millis(time.Since(t0)))
	}
	figure.Report("connector.egress.overhead.ms", figure.Median(withConn)-figure.Median(plain), "ms")
}

// report10MB builds the benchmark's document: a 10 MB report PDF, the
// corpus' camlidl manual (text) followed by eleven photographs (JPEG
// pages, seeded noise over gradients, which compress like photos do), as
// reports in document libraries usually are.
func report10MB(b *testing.B, text []byte) []byte {
	b.Helper()
	const target = 10 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	var imgs []io.Reader
	size := len(text)
	for size < target-400<<10 {
		img := image.NewRGBA(image.Rect(0, 0, 1600, 1200))
		for y := 0; y < 1200; y++ {
			for x := 0; x < 1600; x++ {
				img.Set(x, y, color.RGBA{uint8(x/7) + uint8(rng.IntN(64)), uint8(y/5) + uint8(rng.IntN(64)), uint8(rng.IntN(96)), 255})
			}
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
			b.Fatal(err)
		}
		if size+buf.Len() > target+400<<10 {
			break
		}
		size += buf.Len()
		imgs = append(imgs, &buf)
	}
	var out bytes.Buffer
	if err := api.ImportImages(bytes.NewReader(text), &out, imgs, nil, nil); err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

// BenchmarkDownloadToIndexed reports connector.download_to_indexed.10MB.ms:
// a 10 MB PDF report (report10MB) on the fake SharePoint, from the
// externalDownload tool call (the microsoft connector's Graph requests, the
// 302 to the download host, the file bridge into the workspace) to the
// file indexed by the real PDF extractor; the median of 5 runs. It also
// reports connector.download.10MB.ms, the tool call alone (the file stored
// in the workspace, before extraction).
func BenchmarkDownloadToIndexed(b *testing.B) {
	ctx := context.Background()
	w := worldtest.New(b, worldtest.Options{Workflow: "bench"})
	m := newMSWorld(b, w.DB)
	conn := m.connect(b, w.P, "work")
	doc := report10MB(b, m.pdf)
	docs := m.graph.Drive(spHost, "sites/Marketing", "Documents")
	// Five copies, each a byte different (a comment after %%EOF), so
	// that the file service does not take a run's download for the last one's.
	for i := range 5 {
		m.graph.Put(docs, fmt.Sprintf("Reports/annual-report-%d.pdf", i), "application/pdf", append(bytes.Clone(doc), fmt.Sprintf("%%run %d\n", i)...))
	}
	rec := &connectionstest.Recorder{}
	fileSvc := w.Files.WithIndexer(rec, nil)
	toolsCap := &connections.ToolsCapability{}
	h := m.host(b, nil, []wasm.Capability{(&files.Capability{Files: fileSvc, Workflows: w.Workflows}).Wasm(), toolsCap.Wasm()}, "connections", "pdf")
	toolsCap.Resolver = &connections.Resolver{Plugins: h, Service: m.svc}
	ing := ingest.New(w.DB, w.Blobs, extract.New(h), nil)
	rctx := toolcall.With(ctx, toolcall.Caller{Principal: w.P, WorkspaceID: w.Workspace, WorkflowID: w.Workflow})
	var took, downloads []float64
	for i := range 5 {
		args, _ := json.Marshal(map[string]string{"connection": conn.ID, "service": "sharepoint", "path": fmt.Sprintf("%s/sites/Marketing/Documents/Reports/annual-report-%d.pdf", spHost, i)})
		t0 := time.Now()
		res := h.Call(rctx, "externalDownload", args, &wasm.CallOptions{Tenant: w.P.TenantID})
		if !res.OK {
			b.Fatalf("externalDownload: %+v", res.Error)
		}
		downloads = append(downloads, figure.Millis(time.Since(t0)))
		ids := rec.IDs()
		if len(ids) != i+1 {
			b.Fatalf("%d files handed to the indexer, want %d", len(ids), i+1)
		}
		id := ids[i]
		if _, err := ing.Ingest(ctx, id, false); err != nil {
			b.Fatal(err)
		}
		took = append(took, figure.Millis(time.Since(t0)))
		st, err := w.DB.ContentState(ctx, w.P, id)
		if err != nil || st.Status != kindex.StatusIndexed {
			b.Fatalf("content state %+v %v", st, err)
		}
	}
	b.Logf("document: %d bytes", len(doc))
	figure.Report("connector.download_to_indexed.10MB.ms", figure.Median(took), "ms")
	figure.Report("connector.download.10MB.ms", figure.Median(downloads), "ms")
}

// BenchmarkConnectorUpload reports connector.upload.100MB.ms.<provider>:
// a 100 MB file (100,000,000 bytes of noise) uploaded over each fake, the
// host streaming it in the connector's ranges; the median of b.N runs.
// microsoft: an externalUpload of a workspace file to SharePoint, from
// the tool call to Graph's answer (ranged reads of the blob, both
// plugins, the upload session's 10 MiB fragments without the token).
// google and jira: the connector's upload call (the resolver's, with the
// file as the running upload) to Drive's resumable session in 8 MiB
// chunks and to one Jira multipart attachment. The file servers' figures
// are host/filetransfer's BenchmarkFileServerUpload.
func BenchmarkConnectorUpload(b *testing.B) {
	data := noise(100_000_000)
	b.Run("microsoft", func(b *testing.B) {
		u := newUploadWorld(b)
		id := u.file(b, "big.bin", data)
		var took []float64
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			res := u.upload(b, "sharepoint", spHost+"/sites/Marketing/Archive", id, "replace")
			if !res.OK {
				b.Fatalf("%+v %+v", res, res.Error)
			}
			took = append(took, figure.Millis(time.Since(t0)))
		}
		figure.Report("connector.upload.100MB.ms.microsoft", figure.Median(took), "ms")
	})
	b.Run("google", func(b *testing.B) {
		ge := newGoogleEnv(b, "")
		took := benchUpload(b, ge.resolver, ge.alice, wire.UploadRequest{Connection: ge.conn.ID, Service: "drive", Path: "/Finanzen", Name: "big.bin", Conflict: "replace"}, data)
		figure.Report("connector.upload.100MB.ms.google", took, "ms")
	})
	b.Run("jira", func(b *testing.B) {
		je := newJiraEnv(b)
		took := benchUpload(b, je.resolver, je.alice, wire.UploadRequest{Connection: je.conn.ID, Service: "issues", Path: "PROJ-2", Name: "big.bin", Conflict: "replace"}, data)
		figure.Report("connector.upload.100MB.ms.jira", took, "ms")
	})
}

// benchUpload is the median of b.N uploads of data through the resolver.
func benchUpload(b *testing.B, r *connections.Resolver, p tenancy.Principal, req wire.UploadRequest, data []byte) float64 {
	b.Helper()
	var took []float64
	for i := 0; i < b.N; i++ {
		ctx := connections.WithUpload(context.Background(), connections.BytesSource(req.Name, req.MIMEType, data))
		t0 := time.Now()
		if e, err := r.Upload(ctx, p, req); err != nil || e.Name != req.Name {
			b.Fatalf("%+v %v", e, err)
		}
		took = append(took, figure.Millis(time.Since(t0)))
	}
	return figure.Median(took)
}

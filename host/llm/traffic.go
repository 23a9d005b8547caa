package llm

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
)

// Traffic counts the bytes of the model calls made under a context: request
// bodies sent and response bodies received, retries and streams included.
// A workflow's data statistics (bytesSent, bytesReceived) come from it.
type Traffic struct{ sent, received atomic.Int64 }

// Sent is the bytes of request bodies sent so far.
func (t *Traffic) Sent() int64 { return t.sent.Load() }

// Received is the bytes of response bodies received so far.
func (t *Traffic) Received() int64 { return t.received.Load() }

type trafficKey struct{}

// WithTraffic makes the model calls under ctx count their bytes into t.
func WithTraffic(ctx context.Context, t *Traffic) context.Context {
	return context.WithValue(ctx, trafficKey{}, t)
}

func trafficFrom(ctx context.Context) *Traffic {
	t, _ := ctx.Value(trafficKey{}).(*Traffic)
	return t
}

// countRequest counts req's body as it is sent.
func (t *Traffic) countRequest(req *http.Request) {
	if req.Body == nil || req.Body == http.NoBody {
		return
	}
	req.Body = &countingBody{ReadCloser: req.Body, n: &t.sent}
}

// countResponse counts resp's body as it is read.
func (t *Traffic) countResponse(resp *http.Response) {
	if resp == nil || resp.Body == nil {
		return
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, n: &t.received}
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

package connections

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"unicode/utf8"
)

// ProviderRequest is a request the host sent to a provider for a
// connector, as the host saw it (not as the connector says): its method,
// host and path, never its query, headers or body, which may carry
// tokens (a pre-authenticated download URL's tempauth, Jira's media
// token), and the provider's status (0 when nothing answered).
type ProviderRequest struct {
	Method string `json:"method"`
	Host   string `json:"host"`
	Path   string `json:"path"`
	Status int    `json:"status"`
}

// String is "GET host/path answered HTTP 500".
func (r ProviderRequest) String() string {
	if r.Status == 0 {
		return fmt.Sprintf("%s %s%s got no answer", r.Method, r.Host, r.Path)
	}
	return fmt.Sprintf("%s %s%s answered HTTP %d", r.Method, r.Host, r.Path, r.Status)
}

// Failed: the provider refused it or did not answer.
func (r ProviderRequest) Failed() bool { return r.Status == 0 || r.Status >= 400 }

// maxTrailPath bounds the path kept (a path is the provider's, of any size).
const maxTrailPath = 300

func newProviderRequest(method, rawURL string, status int) ProviderRequest {
	r := ProviderRequest{Method: method, Status: status}
	u, err := url.Parse(rawURL)
	if err != nil {
		return r
	}
	// u.Host has no user information: a URL's user:password stays out.
	r.Host, r.Path = u.Host, u.EscapedPath()
	for len(r.Path) > maxTrailPath {
		_, n := utf8.DecodeLastRuneInString(r.Path)
		r.Path = r.Path[:len(r.Path)-n]
	}
	return r
}

// trail keeps the last request the connection capability sent during
// one connector call, so a failed call can name it.
type trail struct {
	mu   sync.Mutex
	last *ProviderRequest
}

type trailKey struct{}

func withTrail(ctx context.Context) (context.Context, *trail) {
	t := &trail{}
	return context.WithValue(ctx, trailKey{}, t), t
}

// note records a request sent within the call ctx carries, if any.
func note(ctx context.Context, r ProviderRequest) {
	if t, ok := ctx.Value(trailKey{}).(*trail); ok {
		t.mu.Lock()
		t.last = &r
		t.mu.Unlock()
	}
}

// failed is the call's last request if it failed: a connector that went
// on after a refused request (a probe, a retry that succeeded) and failed
// for another reason is not blamed on it.
func (t *trail) failed() *ProviderRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last == nil || !t.last.Failed() {
		return nil
	}
	r := *t.last
	return &r
}

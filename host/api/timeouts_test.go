package api_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/api"
)

// TestSlowClients drives the server with real slow clients over TCP: one
// that stalls in its header and one that stalls in its body are cut; one
// that trickles a body steadily for far longer than the header timeout is
// served. The bounds checked are lower bounds (a cut never comes before its
// timeout) and a generous upper one, so machine load cannot fail the test.
func TestSlowClients(t *testing.T) {
	to := api.Timeouts{Header: 300 * time.Millisecond, BodyRead: 2 * time.Second, Idle: 5 * time.Second}
	ts := server(t, func(o *serverOptions) { o.timeouts = to })
	addr := strings.TrimSuffix(strings.TrimPrefix(ts.base, "http://"), "/api/v1")
	path := "/api/v1/workspaces/" + ts.wsA + "/files"

	// A multipart upload of size bytes, split into its header and body.
	upload := func(size int) (head, body []byte) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		part, _ := w.CreateFormFile("file", "slow.txt")
		part.Write(bytes.Repeat([]byte("steady bytes\n"), size/13))
		w.Close()
		head = fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
			path, addr, ts.alice, w.FormDataContentType(), buf.Len())
		return head, buf.Bytes()
	}
	// cut reports how long the server took to end a connection the client
	// stopped feeding; a minute means it never did.
	cut := func(c net.Conn) time.Duration {
		start := time.Now()
		c.SetReadDeadline(start.Add(time.Minute))
		io.Copy(io.Discard, c)
		return time.Since(start)
	}
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	t.Run("stalls mid-header", func(t *testing.T) {
		c := dial()
		head, _ := upload(1000)
		c.Write(head[:len(head)/2])
		if d := cut(c); d < to.Header/2 || d >= time.Minute {
			t.Fatalf("cut after %v, want about %v", d, to.Header)
		}
	})
	t.Run("sends nothing", func(t *testing.T) {
		if d := cut(dial()); d < to.Header/2 || d >= time.Minute {
			t.Fatalf("cut after %v, want about %v", d, to.Header)
		}
	})
	t.Run("stalls mid-body", func(t *testing.T) {
		c := dial()
		head, body := upload(64 << 10)
		c.Write(head)
		c.Write(body[:len(body)/2])
		if d := cut(c); d < to.BodyRead/2 || d >= time.Minute {
			t.Fatalf("cut after %v, want about %v", d, to.BodyRead)
		}
	})
	t.Run("trickles steadily", func(t *testing.T) {
		c := dial()
		head, body := upload(64 << 10)
		start := time.Now()
		if _, err := c.Write(head); err != nil {
			t.Fatal(err)
		}
		// 64 pieces 20 ms apart: the body takes over 4 header timeouts,
		// and each gap is a hundredth of the body's read timeout.
		step := len(body)/64 + 1
		for i := 0; i < len(body); i += step {
			time.Sleep(20 * time.Millisecond)
			if _, err := c.Write(body[i:min(i+step, len(body))]); err != nil {
				t.Fatalf("cut after %v while the body flowed: %v", time.Since(start), err)
			}
		}
		if time.Since(start) < 4*to.Header {
			t.Fatalf("the trickle took only %v", time.Since(start))
		}
		c.SetReadDeadline(time.Now().Add(time.Minute))
		status, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || !strings.Contains(status, " 201 ") {
			t.Fatalf("after a steady trickle: %q %v", status, err)
		}
	})
}

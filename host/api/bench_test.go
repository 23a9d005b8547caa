package api_test

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/llm/llmtest"
)

// BenchmarkSSEIdle reports sse.idle_conn.mem KiB: the server's memory per
// idle event-stream connection (heap and goroutine stacks), with 1,000
// clients following one finished workflow. The clients are bare TCP
// connections, so their own cost stays out of the figure.
func BenchmarkSSEIdle(b *testing.B) {
	ts := server(b)
	ts.model.Script(llmtest.Reply("done"))
	w := startWorkflow(b, ts, ts.alice, `{"prompt":"hello"}`)
	evs := readEvents(b, ts, w.ID, 0, terminal)
	last := evs[len(evs)-1].ID
	u, _ := url.Parse(ts.base)
	request := fmt.Sprintf("GET %s/workflows/%s/events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nLast-Event-ID: %d\r\n\r\n",
		u.Path, w.ID, u.Host, ts.alice, last)

	measure := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	const clients = 1000
	before := measure()
	conns := make([]net.Conn, 0, clients)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range clients {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte(request)); err != nil {
			b.Fatal(err)
		}
		// Wait for the stream to be established (headers and the first comment).
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatalf("stream %d: %v", len(conns), err)
			}
			if strings.HasPrefix(line, ": connected") {
				break
			}
		}
	}
	after := measure()
	figure.Report("sse.idle_conn.mem", float64(after-before)/clients/1024, "KiB")
}

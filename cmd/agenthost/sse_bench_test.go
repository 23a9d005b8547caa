package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/testenv"
)

// sseClients is how many streams the connect and memory figures open.
const sseClients = 1000

// BenchmarkSSE reports the event streams' figures at the scale of an
// organisation, on two `serve` hosts sharing a real PostgreSQL, each beside
// the same figure of the minimal Go SSE server (sse.peer.*, ssepeer_test.go)
// measured the same way on the same machine at the same time:
//
//   - sse.idle_conn.rss.kib: the growth of a host's resident memory
//     (VmRSS of /proc/PID/status) when 1,000 idle streams are opened (eight
//     at a time) against it, divided by 1,000;
//   - sse.connect.1000.ms: how long 1,000 clients connecting at once take
//     until every one has its stream (the first comment line);
//   - sse.crosshost.latency.p50.ms: the median time from an event's append
//     on one host to its arrival at a client of the other (agenthost: the
//     chunks of a streamed answer, timed from the event's created_at; the
//     peer: events appended every 20 ms, timed from before the append).
//
// The clients are bare TCP connections speaking HTTP/1.1, so their own cost
// stays out of the servers' memory.
func BenchmarkSSE(b *testing.B) {
	database := testenv.Postgres(b)
	ctx := context.Background()
	var logs syncBuffer
	reply := llmtest.Reply(strings.Repeat("Every chunk of this answer is one event, timed across hosts. ", 12)).WithChunkDelay(20 * time.Millisecond)
	hosts, err := startLoadHosts(ctx, loadConfig{Database: database, Hosts: 2, Chunk: 8, Log: &logs, Command: testBinary}, reply)
	if err != nil {
		b.Fatal(err)
	}
	defer hosts.Stop()
	a, bb := hosts.Bases[0], hosts.Bases[1]
	auth := "Bearer " + hosts.Token

	// The idle streams follow a finished workflow from its end.
	idle, last := finishedWorkflow(b, a, hosts.Token, hosts.Workspace)
	ours := streamTarget{auth: auth, lastEventID: last}
	figure.Report("sse.idle_conn.rss.kib", idleRSS(b, ours.at(bb+"/workflows/"+idle+"/events"), hosts.PIDs[1]), "KiB")
	figure.Report("sse.connect.1000.ms", connectAll(b, ours.at(a+"/workflows/"+idle+"/events")), "ms")
	var lat []time.Duration
	for range 3 {
		lat = append(lat, crossHostLatency(b, database, a, bb, hosts.Token, hosts.Workspace)...)
	}
	figure.Report("sse.crosshost.latency.p50.ms", figure.Millis(figure.Percentile(lat, 50)), "ms")

	const token = "peer-token"
	peerCtx, stopPeers := context.WithCancel(ctx)
	defer stopPeers()
	pa, _, err := startSSEPeer(peerCtx, database, token)
	if err != nil {
		b.Fatal(err)
	}
	pb, pbCmd, err := startSSEPeer(peerCtx, database, token)
	if err != nil {
		b.Fatal(err)
	}
	peer := streamTarget{auth: "Bearer " + token}
	figure.Report("sse.peer.idle_conn.rss.kib", idleRSS(b, peer.at(pb+"/events/idle"), pbCmd.Process.Pid), "KiB")
	figure.Report("sse.peer.connect.1000.ms", connectAll(b, peer.at(pa+"/events/idle")), "ms")
	figure.Report("sse.peer.crosshost.latency.p50.ms", figure.Millis(figure.Percentile(peerLatency(b, pa, pb, peer), 50)), "ms")
	if strings.Contains(logs.String(), "level=ERROR") {
		b.Logf("hosts' log:\n%s", logs.String())
	}
}

// streamTarget is one server's event stream, as a raw HTTP/1.1 request.
type streamTarget struct {
	auth        string
	lastEventID int64
	host, req   string
}

func (t streamTarget) at(raw string) streamTarget {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	t.host = u.Host
	t.req = fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nAccept: text/event-stream\r\nLast-Event-ID: %d\r\n\r\n", u.Path, u.Host, t.auth, t.lastEventID)
	return t
}

// open connects one stream and waits for its first comment.
func (t streamTarget) open() (net.Conn, *bufio.Reader, error) {
	c, err := net.Dial("tcp", t.host)
	if err != nil {
		return nil, nil, err
	}
	if _, err := io.WriteString(c, t.req); err != nil {
		c.Close()
		return nil, nil, err
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReaderSize(c, 512)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("stream of %s: %w", t.host, err)
		}
		if strings.HasPrefix(line, ": connected") {
			c.SetReadDeadline(time.Time{})
			return c, r, nil
		}
		if strings.HasPrefix(line, "HTTP/1.1 ") && !strings.HasPrefix(line, "HTTP/1.1 200") {
			c.Close()
			return nil, nil, fmt.Errorf("stream of %s: %s", t.host, strings.TrimSpace(line))
		}
	}
}

// openMany opens n streams, at most conc at a time, and returns them with
// the time it took.
func openMany(tb testing.TB, t streamTarget, n, conc int) ([]net.Conn, time.Duration) {
	tb.Helper()
	conns := make([]net.Conn, n)
	errs := make([]error, n)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			conns[i], _, errs[i] = t.open()
		})
	}
	wg.Wait()
	took := time.Since(start)
	for _, err := range errs {
		if err != nil {
			closeAll(conns)
			tb.Fatal(err)
		}
	}
	return conns, took
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// idleRSS is the growth of pid's resident memory per idle stream, in KiB.
// One stream is opened first, so that what the first one sets up once
// (the broker's topic, pools) stays out of it.
func idleRSS(tb testing.TB, t streamTarget, pid int) float64 {
	tb.Helper()
	warm, _ := openMany(tb, t, 8, 8)
	defer closeAll(warm)
	time.Sleep(time.Second)
	before := rssKiB(tb, pid)
	conns, _ := openMany(tb, t, sseClients, 8)
	defer closeAll(conns)
	time.Sleep(time.Second)
	return float64(rssKiB(tb, pid)-before) / sseClients
}

// connectAll is how long sseClients clients connecting at once take, in
// milliseconds.
func connectAll(tb testing.TB, t streamTarget) float64 {
	tb.Helper()
	conns, took := openMany(tb, t, sseClients, sseClients)
	closeAll(conns)
	// Let the server notice the closed streams (their heartbeats) and its
	// idle workers expire before whatever is measured next.
	time.Sleep(time.Second)
	return figure.Millis(took)
}

func rssKiB(tb testing.TB, pid int) int64 {
	tb.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// startWorkflowAPI starts a workflow on a host and returns its id.
func startWorkflowAPI(tb testing.TB, base, token, ws string) string {
	tb.Helper()
	req, _ := http.NewRequest("POST", base+"/workspaces/"+ws+"/workflows", strings.NewReader(`{"prompt":"stream an answer"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var w struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &w) != nil {
		tb.Fatalf("start: %d %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	return w.ID
}

// followSSE reads a stream until its round completes, and returns each
// event's arrival time by sequence number; a gap or a repeat fails tb.
func followSSE(tb testing.TB, r *bufio.Reader, on func(seq int64, typ, data string)) {
	tb.Helper()
	var seq, last int64
	var typ string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			tb.Fatalf("stream ended after event %d: %v", last, err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "id: "):
			seq, _ = strconv.ParseInt(line[4:], 10, 64)
			if seq != last+1 {
				tb.Fatalf("event %d after %d", seq, last)
			}
			last = seq
		case strings.HasPrefix(line, "event: "):
			typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			on(seq, typ, line[6:])
			switch typ {
			case "complete":
				return
			case "stopped", "error":
				tb.Fatalf("the round ended %s: %s", typ, line)
			}
		}
	}
}

// finishedWorkflow runs one workflow to its end on host base and returns
// its id and last event's number.
func finishedWorkflow(tb testing.TB, base, token, ws string) (string, int64) {
	tb.Helper()
	id := startWorkflowAPI(tb, base, token, ws)
	_, r, err := streamTarget{auth: "Bearer " + token}.at(base + "/workflows/" + id + "/events").open()
	if err != nil {
		tb.Fatal(err)
	}
	var last int64
	followSSE(tb, r, func(seq int64, _, _ string) { last = seq })
	return id, last
}

// crossHostLatency starts a workflow on host a, follows it on host b, and
// returns, for every event appended after b's stream was open, the time
// from its created_at (stamped by a before appending) to its arrival.
func crossHostLatency(tb testing.TB, database, a, b, token, ws string) []time.Duration {
	tb.Helper()
	id := startWorkflowAPI(tb, a, token, ws)
	c, r, err := streamTarget{auth: "Bearer " + token}.at(b + "/workflows/" + id + "/events").open()
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	connected := time.Now()
	arrived := map[int64]time.Time{}
	followSSE(tb, r, func(seq int64, _, _ string) { arrived[seq] = time.Now() })
	conn, err := pgx.Connect(context.Background(), database)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT seq, created_at FROM events WHERE workflow_id = $1`, id)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var seq, at int64
		if err := rows.Scan(&seq, &at); err != nil {
			tb.Fatal(err)
		}
		if created := time.UnixMicro(at); created.After(connected) {
			out = append(out, arrived[seq].Sub(created))
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(out) < 20 {
		tb.Fatalf("only %d events were appended after the stream opened", len(out))
	}
	return out
}

// peerLatency appends 200 events on peer a, 20 ms apart, and returns the
// time from before each append to its arrival at a client of peer b.
func peerLatency(tb testing.TB, a, b string, t streamTarget) []time.Duration {
	tb.Helper()
	c, r, err := t.at(b + "/events/latency").open()
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	const n = 200
	got := make(chan time.Duration, n)
	go func() {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(got)
				return
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				sent, _ := strconv.ParseInt(v, 10, 64)
				got <- time.Since(time.Unix(0, sent))
			}
		}
	}()
	for range n {
		resp, err := http.Post(fmt.Sprintf("%s/append/latency?data=%d", a, time.Now().UnixNano()), "", nil)
		if err != nil {
			tb.Fatal(err)
		}
		resp.Body.Close()
		time.Sleep(20 * time.Millisecond)
	}
	var out []time.Duration
	deadline := time.After(time.Minute)
	for len(out) < n {
		select {
		case d, ok := <-got:
			if !ok {
				tb.Fatalf("the peer's stream ended after %d events", len(out))
			}
			out = append(out, d)
		case <-deadline:
			tb.Fatalf("the peer delivered %d of %d events", len(out), n)
		}
	}
	return out
}

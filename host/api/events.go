package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// heartbeat keeps idle streams alive through proxies and is how a dropped
// client is noticed: a stream learns of a disconnect only by a failed write.
const heartbeat = 15 * time.Second

// streamWriteTimeout bounds one write of a stream: a client that stops
// reading loses its stream instead of holding it forever.
const streamWriteTimeout = 30 * time.Second

// recheckEvery is how often a stream that delivers events checks its
// credential again (an idle one checks at each heartbeat): a revoked token
// or ended session stops the stream within this time, and a busy stream
// costs its database one lookup per interval.
const recheckEvery = 2 * time.Second

// hijackWait is how long a stream's subscription waits for fasthttp to
// hand the connection over before it is given up (the connection failed).
const hijackWait = 30 * time.Second

// eventStreams are the server's running event streams: ctx ends them all (a
// shutdown), wait waits for their goroutines.
type eventStreams struct {
	ctx context.Context
	mu  sync.Mutex
	// closed: wait has begun, no stream starts any more.
	closed bool
	wg     sync.WaitGroup
}

// start runs fn as a stream's goroutine, unless the server is shutting
// down (false).
func (s *eventStreams) start(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
	return true
}

// wait stops new streams and waits for the running ones to end (their
// context must have ended).
func (s *eventStreams) wait() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wg.Wait()
}

// handleEvents streams a workflow's events as Server-Sent Events: first
// everything after Last-Event-ID (or ?after=), then live ones, each with its
// sequence number as the SSE id, so a reconnecting client misses nothing.
//
// An idle stream is the organisation-wide steady state (every open
// workspace tab holds one), so it is kept small: the handler checks access
// and opens the subscription, then takes the connection over from fasthttp
// (Hijack), which releases the request's context and read buffer, and
// streams from one goroutine that holds the connection, the subscription
// and a heartbeat timer; events are formatted into a buffer that lives only
// for one write. (fasthttp's own body streaming costs three goroutines and
// a pipe with two 4 KiB buffers per stream.)
func handleEvents(wf *workflows.Service, streams *eventStreams) fiber.Handler {
	return func(c *fiber.Ctx) error {
		last := c.Get("Last-Event-ID")
		if last == "" {
			last = c.Query("after", "0")
		}
		afterSeq, err := strconv.ParseInt(last, 10, 64)
		if err != nil || afterSeq < 0 {
			return fmt.Errorf("%w: Last-Event-ID %q is not a sequence number", tenancy.ErrInvalid, last)
		}
		// The id outlives the handler (a key of the broker's map), and
		// fasthttp reuses the request's buffer once it returns.
		id := strings.Clone(c.Params("id"))
		again := requestRecheck(c)
		sub, err := wf.Open(c.UserContext(), principal(c), id, afterSeq)
		if err != nil {
			return err
		}
		chunked := streamHeaders(c)
		takeOver(c, streams, sub.Close, func(conn net.Conn, header []byte) {
			streamEvents(streams.ctx, conn, sub, again, header, chunked)
		})
		return nil
	}
}

// takeOver takes the request's connection over from fasthttp once the
// handler has returned and runs stream on it, with the response header
// (set by streamHeaders) to write first, as one of streams. release frees
// what the stream holds (a subscription) when stream never runs: fasthttp
// calls the hijack handler only after the handler returns, and not at all
// when the connection fails first, so whichever comes first of the hijack
// and an abandon timer owns the release. stream closes conn and releases
// what it holds itself.
func takeOver(c *fiber.Ctx, streams *eventStreams, release func(), stream func(conn net.Conn, header []byte)) {
	rc := c.Context()
	var state atomic.Int32 // 0 pending, 1 streaming, 2 abandoned
	abandon := time.AfterFunc(hijackWait, func() {
		if state.CompareAndSwap(0, 2) {
			release()
		}
	})
	rc.HijackSetNoResponse(true)
	rc.Hijack(func(conn net.Conn) {
		abandon.Stop()
		if !state.CompareAndSwap(0, 1) {
			conn.Close()
			return
		}
		// The server (KeepHijackedConns) leaves the connection to us and
		// releases the request's context once this returns; the header is
		// copied out of it first.
		header := append([]byte(nil), rc.Response.Header.Header()...)
		if u, ok := conn.(interface{ UnsafeConn() net.Conn }); ok {
			conn = u.UnsafeConn() // drops fasthttp's read buffer
		}
		if !streams.start(func() { stream(conn, header) }) {
			release()
			conn.Close()
		}
	})
}

// streamEvents writes the header and then the subscription's events to
// conn until the stream ends, the client goes away, its credential no
// longer admits it (again; nil: never checked) or ctx ends.
func streamEvents(ctx context.Context, conn net.Conn, sub *workflows.Subscription, again recheck, header []byte, chunked bool) {
	defer conn.Close()
	defer sub.Close()
	w := sseWriter{conn: conn, chunked: chunked}
	if !w.write(header, []byte(": connected\n\n")) {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	checked := time.Now()
	for {
		evs, wait, err := sub.Next(ctx)
		if err != nil {
			w.end()
			return
		}
		if len(evs) > 0 && time.Since(checked) >= recheckEvery {
			checked = time.Now()
			if revoked(ctx, again) {
				w.end()
				return
			}
		}
		if len(evs) > 0 {
			var buf []byte
			for _, ev := range evs {
				buf = fmt.Appendf(buf, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, ev.Data)
			}
			if !w.write(nil, buf) {
				return
			}
			continue
		}
		select {
		case <-wait:
		case <-tick.C:
			checked = time.Now()
			if revoked(ctx, again) {
				w.end()
				return
			}
			if !w.write(nil, []byte(": ping\n\n")) {
				return
			}
		case <-ctx.Done():
			w.end()
			return
		}
	}
}

// revoked reports whether the stream's credential no longer admits it. A
// check that could not be made (the database is away) keeps the stream: it
// is made again at the next interval, and reads the stream serves are
// checked as they were when it opened.
func revoked(ctx context.Context, again recheck) bool {
	if again == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := again(ctx)
	return errors.Is(err, tenancy.ErrUnauthenticated) || errors.Is(err, tenancy.ErrForbidden) || errors.Is(err, store.ErrSecondFactorRequired)
}

// sseWriter frames a stream's writes (as chunks when chunked) and bounds
// each by streamWriteTimeout.
type sseWriter struct {
	conn    net.Conn
	chunked bool
}

// write sends prefix (the header) as it is and body framed, in one write;
// false when the connection failed.
func (w sseWriter) write(prefix, body []byte) bool {
	out := prefix
	if w.chunked {
		out = strconv.AppendInt(out, int64(len(body)), 16)
		out = append(out, "\r\n"...)
		out = append(out, body...)
		out = append(out, "\r\n"...)
	} else {
		out = append(out, body...)
	}
	return w.send(out)
}

// end sends the last chunk of a chunked body.
func (w sseWriter) end() {
	if w.chunked {
		w.send([]byte("0\r\n\r\n"))
	}
}

func (w sseWriter) send(b []byte) bool {
	if err := w.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil {
		return false
	}
	_, err := w.conn.Write(b)
	return err == nil
}

// streamHeaders readies the response of an event stream whose connection
// the handler takes over, and says whether its body is chunked: HTTP/1.1
// clients get a chunked body, whose last chunk tells a stream that ended
// (the workflow was deleted, the server shuts down) from a dropped
// connection; HTTP/1.0 ones a body that ends with the connection.
func streamHeaders(c *fiber.Ctx) (chunked bool) {
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	h := &c.Context().Response.Header
	chunked = c.Context().Request.Header.IsHTTP11()
	if chunked {
		h.SetContentLength(-1)
	} else {
		h.SetContentLength(-2)
	}
	h.SetConnectionClose()
	return chunked
}

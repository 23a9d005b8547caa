package api

import (
	"net"
	"sync"
	"syscall"
	"time"
)

// Timeouts bound how long a client may hold a connection without doing its
// part. fasthttp's ReadTimeout covers a whole request, body included, which
// would cut long uploads; so the header gets a total deadline (fasthttp's
// ReadTimeout) and the body only a deadline per read: an upload may take
// hours as long as its bytes keep flowing, while a client that stalls — in
// its header, its body or between requests — is cut.
type Timeouts struct {
	// Header is the time from a request's start to the end of its header
	// (default 30 s). A connection that sends nothing is cut after it too.
	Header time.Duration
	// BodyRead is the longest wait for the next bytes of a request body
	// (default 60 s).
	BodyRead time.Duration
	// Idle is how long a keep-alive connection may wait for its next
	// request (default 120 s).
	Idle time.Duration
}

func (t Timeouts) withDefaults() Timeouts {
	if t.Header <= 0 {
		t.Header = 30 * time.Second
	}
	if t.BodyRead <= 0 {
		t.BodyRead = 60 * time.Second
	}
	if t.Idle <= 0 {
		t.Idle = 120 * time.Second
	}
	return t
}

// progressListener hands out progressConns.
type progressListener struct {
	net.Listener
	bodyRead time.Duration
}

func (l progressListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &progressConn{Conn: c, bodyRead: l.bodyRead}, nil
}

// progressConn gives request bodies a deadline per read. fasthttp sets a
// read deadline when a request starts (the header timeout) and when a
// keep-alive connection waits for its next request (the idle timeout), and
// none in between; the connection watches its own bytes for the end of the
// header (an empty line after a non-empty one), and from there until
// fasthttp's next deadline, each read gets bodyRead to make progress
// instead of the header's deadline.
type progressConn struct {
	net.Conn
	bodyRead time.Duration

	mu     sync.Mutex
	inBody bool
	seen   bool // a byte other than CR or LF since the request started
	state  int  // 0: in a line, 1: after LF, 2: after LF CR
}

func (c *progressConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	inBody := c.inBody
	c.mu.Unlock()
	if inBody {
		if err := c.Conn.SetReadDeadline(time.Now().Add(c.bodyRead)); err != nil {
			return 0, err
		}
	}
	n, err := c.Conn.Read(p)
	if !inBody && n > 0 {
		c.mu.Lock()
		c.scan(p[:n])
		c.mu.Unlock()
	}
	return n, err
}

// scan looks for the header's end in the bytes read.
func (c *progressConn) scan(b []byte) {
	for _, x := range b {
		switch {
		case x == '\n' && c.state != 0 && c.seen:
			c.inBody = true
			return
		case x == '\n':
			c.state = 1
		case x == '\r' && c.state == 1:
			c.state = 2
		case x == '\r':
			c.state = 0
		default:
			c.state, c.seen = 0, true
		}
	}
}

// SetReadDeadline is fasthttp starting a request or an idle wait: the
// header phase begins again.
func (c *progressConn) SetReadDeadline(t time.Time) error {
	c.reset()
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline is SetReadDeadline for both directions.
func (c *progressConn) SetDeadline(t time.Time) error {
	c.reset()
	return c.Conn.SetDeadline(t)
}

func (c *progressConn) reset() {
	c.mu.Lock()
	c.inBody, c.seen, c.state = false, false, 0
	c.mu.Unlock()
}

// SyscallConn exposes the socket (untilDisconnect peeks at it).
func (c *progressConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, syscall.EINVAL
	}
	return sc.SyscallConn()
}

package api

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
)

// disconnectPoll is how often a long request checks that its client is
// still there.
const disconnectPoll = 200 * time.Millisecond

// untilDisconnect returns the request's context, cancelled as well when the
// client closes its connection. fasthttp never cancels a handler when its
// client goes away, so a tool call whose caller hung up would wait for a
// plugin instance and run to its deadline for nobody. The check peeks at the
// socket (MSG_PEEK: nothing is consumed, so a pipelined request stays
// intact); an orderly close reads as zero bytes.
func untilDisconnect(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(c.UserContext())
	// The body is read by now; its read deadline (see Timeouts) would make
	// every later peek fail as a timeout, hiding a hang-up. fasthttp sets
	// the next deadline when it waits for the next request.
	c.Context().Conn().SetReadDeadline(time.Time{})
	sc, ok := c.Context().Conn().(syscall.Conn)
	if !ok {
		return ctx, cancel
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return ctx, cancel
	}
	go func() {
		t := time.NewTicker(disconnectPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if closedByPeer(raw) {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

// closedByPeer peeks one byte without blocking: 0 bytes and no error is the
// peer's FIN; a reset is an error other than "would block".
func closedByPeer(raw syscall.RawConn) bool {
	var closed bool
	var buf [1]byte
	err := raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR):
		default:
			closed = true
		}
		return true // never wait for readiness
	})
	var ne net.Error
	if err != nil && !errors.As(err, &ne) {
		return true
	}
	return closed
}

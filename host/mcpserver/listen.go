package mcpserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Serve runs the server on its own net/http listener at addr until ctx
// ends, then shuts it down within grace: open streams are closed at the end
// of it. ready, when not nil, receives the listening address.
func Serve(ctx context.Context, s *Server, addr string, grace time.Duration, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr())
	}
	base, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	srv := &http.Server{
		Handler: s,
		// Slow clients cannot hold a connection with a header that never
		// ends; streams themselves may stay open as long as the call runs.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          nil,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	// Requests still running at half the grace are cancelled.
	t := time.AfterFunc(grace/2, stop)
	defer t.Stop()
	s.closeSessions()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	return nil
}

package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// serveMetrics serves /metrics on addr for the worker, which has no
// API server to serve them, under serve's rule: loopback clients, and
// others only with the metrics token. "off" serves nothing. It returns a
// function that stops the server.
func serveMetrics(addr string, metrics http.Handler, token string, logger *slog.Logger) (func(), error) {
	if addr == "off" || addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("worker: serving /metrics: %w (set -metrics-addr, or off)", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsGate(metrics, token))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("worker: /metrics server", "err", err)
		}
	}()
	logger.Info("serving /metrics", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

// metricsGate admits loopback clients and the holders of token (the
// figures name tenants and their spending).
func metricsGate(next http.Handler, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		ip := net.ParseIP(host)
		given := []byte(r.Header.Get("Authorization"))
		if (ip == nil || !ip.IsLoopback()) && (token == "" || subtle.ConstantTimeCompare(given, []byte("Bearer "+token)) != 1) {
			http.Error(w, "metrics are served to loopback clients and to the metrics token's holders", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The SSE peer is the yardstick of the sse.* figures: a minimal Go SSE
// server on net/http, with what such a server needs to run on several hosts
// and nothing else. It keeps events in a PostgreSQL table and announces
// each with NOTIFY, carrying the event in the payload; every host LISTENs on
// one connection and hands the payload to its streams through a channel
// each. It checks one fixed bearer token (no database lookup), replays
// nothing, and has no fallback for lost notifications: a lower bound for
// what agenthost's event streams cost, not a design to copy.
//
// It runs as a child process of the test binary (AGENTHOST_TEST_SSE_PEER=1,
// see TestMain), so that its memory is measured as agenthost's is:
//
//	ssepeer ADDR DATABASE-URL TOKEN
//
// Routes: GET /events/{topic} (the stream), POST /append/{topic}?data=…
// (stores and announces an event; data is a short text).
func ssePeerMain(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("ssepeer ADDR DATABASE-URL TOKEN")
	}
	addr, database, token := args[0], args[1], args[2]
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, database)
	if err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS peer_events (seq BIGSERIAL PRIMARY KEY, topic TEXT NOT NULL, data TEXT NOT NULL)`); err != nil {
		return err
	}
	p := &ssePeer{subs: map[string]map[chan string]struct{}{}}
	listen, err := pgx.Connect(ctx, database)
	if err != nil {
		return err
	}
	if _, err := listen.Exec(ctx, "LISTEN peer_events"); err != nil {
		return err
	}
	go func() {
		for {
			n, err := listen.WaitForNotification(ctx)
			if err != nil {
				fmt.Fprintln(os.Stderr, "ssepeer: listen:", err)
				os.Exit(1)
			}
			topic, ev, _ := strings.Cut(n.Payload, "\n")
			p.publish(topic, ev)
		}
	}()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events/{topic}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		topic := r.PathValue("topic")
		ch := p.subscribe(topic)
		defer p.unsubscribe(topic, ch)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		fl := w.(http.Flusher)
		fmt.Fprint(w, ": connected\n\n")
		fl.Flush()
		tick := time.NewTicker(15 * time.Second)
		defer tick.Stop()
		for {
			select {
			case ev := <-ch:
				fmt.Fprint(w, ev)
				fl.Flush()
			case <-tick.C:
				fmt.Fprint(w, ": ping\n\n")
				fl.Flush()
			case <-r.Context().Done():
				return
			}
		}
	})
	mux.HandleFunc("POST /append/{topic}", func(w http.ResponseWriter, r *http.Request) {
		topic, data := r.PathValue("topic"), r.URL.Query().Get("data")
		_, err := pool.Exec(r.Context(), `WITH e AS (INSERT INTO peer_events (topic, data) VALUES ($1, $2) RETURNING seq)
			SELECT pg_notify('peer_events', $1 || E'\n' || 'id: ' || e.seq || E'\nevent: status\ndata: ' || $2 || E'\n\n') FROM e`, topic, data)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return http.Serve(ln, mux)
}

type ssePeer struct {
	mu   sync.Mutex
	subs map[string]map[chan string]struct{}
}

func (p *ssePeer) subscribe(topic string) chan string {
	ch := make(chan string, 16)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.subs[topic] == nil {
		p.subs[topic] = map[chan string]struct{}{}
	}
	p.subs[topic][ch] = struct{}{}
	return ch
}

func (p *ssePeer) unsubscribe(topic string, ch chan string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.subs[topic], ch)
}

// publish hands an event to the topic's streams; a stream whose channel is
// full misses it (the peer keeps no history).
func (p *ssePeer) publish(topic, ev string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ch := range p.subs[topic] {
		select {
		case ch <- ev:
		default:
		}
	}
}

// startSSEPeer starts the peer as a child process on a free loopback port
// and returns its base URL and process, once it answers.
func startSSEPeer(ctx context.Context, database, token string) (string, *exec.Cmd, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, os.Args[0], addr, database, token)
	cmd.Env = append(os.Environ(), "AGENTHOST_TEST_SSE_PEER=1")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	base := "http://" + addr
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(base + "/events/x"); err == nil {
			resp.Body.Close()
			return base, cmd, nil
		}
		if time.Since(start) > time.Minute {
			cmd.Process.Kill()
			cmd.Wait()
			return "", nil, fmt.Errorf("ssepeer: not answering at %s", addr)
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// loadCmd runs a bounded load on this machine: several `serve` hosts
// sharing one PostgreSQL, a scripted model, and clients that start N
// workflows on one host while following each on another. It reports what
// completed, what failed, round latencies and event throughput, and checks
// that every client saw every event once. Everything listens on loopback
// and stops by itself.
//
//	agenthost load -database postgres://127.0.0.1/db -n 1000 [-hosts 2] [-concurrency 50]
func loadCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	database := fs.String("database", envOr("AGENTHOST_DATABASE_URL", ""), "PostgreSQL URL on this machine (the hosts share it; it is migrated and gets a tenant of its own)")
	n := fs.Int("n", 100, "workflows to run")
	hosts := fs.Int("hosts", 2, "serve hosts")
	concurrency := fs.Int("concurrency", 50, "workflows in flight at once")
	chunks := fs.Int("chunk", 8, "characters per streamed chunk of the scripted answer (smaller: more events)")
	timeout := fs.Duration("timeout", 30*time.Minute, "the whole run's limit")
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	switch {
	case *database == "":
		return errors.New("load: -database is required (a PostgreSQL URL on this machine)")
	case *n < 1 || *hosts < 1 || *concurrency < 1 || *chunks < 1:
		return errors.New("load: -n, -hosts, -concurrency and -chunk must be positive")
	}
	if err := loopbackDatabase(*database); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	res, err := runLoad(ctx, loadConfig{Database: *database, Workflows: *n, Hosts: *hosts, Concurrency: *concurrency, Chunk: *chunks, Log: stderr})
	if err != nil {
		return err
	}
	res.report(&figure.Reporter{W: stdout})
	if res.Failed > 0 || res.Lost > 0 {
		return fmt.Errorf("load: %d failed, %d events lost or repeated", res.Failed, res.Lost)
	}
	return nil
}

// loopbackDatabase refuses a database on another machine: a load test is
// not to be pointed at shared infrastructure by a typo.
func loopbackDatabase(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return errors.New("load: -database is not a PostgreSQL URL (postgres://…)")
	}
	host := u.Hostname()
	if host == "" || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("load: -database must be on this machine (loopback), not %s", host)
}

type loadConfig struct {
	Database                             string
	Workflows, Hosts, Concurrency, Chunk int
	// Log receives the hosts' warnings and errors.
	Log io.Writer
	// Command starts a host (`agenthost serve …`); nil runs this
	// executable.
	Command func(ctx context.Context, args ...string) *exec.Cmd
}

func (c loadConfig) hostCommand(ctx context.Context, args ...string) *exec.Cmd {
	if c.Command != nil {
		return c.Command(ctx, args...)
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.CommandContext(ctx, exe, args...)
}

type loadResult struct {
	Completed, Failed int
	Rounds            []time.Duration
	Events            int
	Lost              int
	Wall              time.Duration
}

func (r loadResult) report(rep *figure.Reporter) {
	rep.Report("load.completed", float64(r.Completed), "workflows")
	rep.Report("load.failed", float64(r.Failed), "workflows")
	rep.Report("load.round.p50.ms", figure.Millis(figure.Percentile(r.Rounds, 0.50)), "ms")
	rep.Report("load.round.p99.ms", figure.Millis(figure.Percentile(r.Rounds, 0.99)), "ms")
	rep.Report("load.events_per_s", float64(r.Events)/r.Wall.Seconds(), "events/s")
	rep.Report("load.events.lost", float64(r.Lost), "events")
}

// loadHosts are the hosts of a run, started by startLoadHosts.
type loadHosts struct {
	// Bases are the hosts' API base URLs (…/api/v1), PIDs their process
	// ids.
	Bases []string
	PIDs  []int
	// Token is an admin's API token of the run's own tenant, Workspace a
	// workspace of it.
	Token, Workspace string
	// Logs receives the hosts' warnings and errors (the run's log,
	// serialised).
	Logs io.Writer
	stop func()
}

// Stop stops the hosts and the model and removes their files.
func (h *loadHosts) Stop() { h.stop() }

// startLoadHosts starts the scripted model (answering with reply, or the
// load's answer when reply is empty) and cfg.Hosts hosts on cfg.Database,
// and returns once every host answers.
func startLoadHosts(ctx context.Context, cfg loadConfig, reply llmtest.Step) (_ *loadHosts, err error) {
	if reply.Content == "" {
		reply = llmtest.Reply("Load test answer: the quick brown fox jumps over the lazy dog, and every event of this answer must arrive once.")
	}
	model := llmtest.Start(llmtest.WithChunkSize(cfg.Chunk), llmtest.WithDefault(reply))
	var cleanup []func()
	h := &loadHosts{stop: func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}}
	cleanup = append(cleanup, model.Close)
	defer func() {
		if err != nil {
			h.Stop()
		}
	}()
	dir, err := os.MkdirTemp("", "agenthost-load-")
	if err != nil {
		return nil, err
	}
	cleanup = append(cleanup, func() { os.RemoveAll(dir) })
	conf := filepath.Join(dir, "agenthost.yaml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "llm:\n  providers:\n    - name: load\n      baseURL: %s\n  models:\n    agent:\n      - provider: load\n        model: scripted\n        free: true\n", model.URL()), 0o600); err != nil {
		return nil, err
	}
	// Migrated once, before the hosts start, so they do not race to.
	if err := migrateCmd(ctx, []string{"-database", cfg.Database}, io.Discard, io.Discard); err != nil {
		return nil, fmt.Errorf("load: migrating: %w", err)
	}
	if h.Token, h.Workspace, err = loadTenant(ctx, cfg.Database); err != nil {
		return nil, err
	}
	// Each host is a process of its own, as on separate machines: one that
	// misbehaves in its shutdown cannot take the run down with it.
	hostCtx, stopHosts := context.WithCancel(ctx)
	var wg sync.WaitGroup
	cleanup = append(cleanup, func() {
		stopHosts()
		wg.Wait()
	})
	logs := &lockedWriter{w: cfg.Log}
	h.Logs = logs
	for i := range cfg.Hosts {
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		plugins := filepath.Join(dir, "plugins-"+strconv.Itoa(i))
		if err := os.Mkdir(plugins, 0o700); err != nil {
			return nil, err
		}
		cmd := cfg.hostCommand(hostCtx, "serve", "-database", cfg.Database, "-addr", addr, "-mcp-addr", "off", "-config", conf, "-plugins", plugins)
		cmd.Stdout, cmd.Stderr = io.Discard, warnings(logs)
		// Stopped like an operator would stop it; killed if it lingers.
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 30 * time.Second
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("load: host %d: %w", i, err)
		}
		exited := make(chan error, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cmd.Wait()
			if err == nil {
				err = errors.New("exited")
			}
			exited <- err
		}()
		base := "http://" + addr
		if err := waitHealthy(ctx, base, exited); err != nil {
			return nil, fmt.Errorf("load: host %d: %w", i, err)
		}
		h.Bases = append(h.Bases, base+"/api/v1")
		h.PIDs = append(h.PIDs, cmd.Process.Pid)
	}
	return h, nil
}

// runLoad starts the model and the hosts, runs the workflows and stops
// everything.
func runLoad(ctx context.Context, cfg loadConfig) (loadResult, error) {
	hosts, err := startLoadHosts(ctx, cfg, llmtest.Step{})
	if err != nil {
		return loadResult{}, err
	}
	defer hosts.Stop()
	bases, token, ws, logs := hosts.Bases, hosts.Token, hosts.Workspace, hosts.Logs

	var mu sync.Mutex
	var res loadResult
	sem := make(chan struct{}, cfg.Concurrency)
	start := time.Now()
	var clients sync.WaitGroup
	for i := range cfg.Workflows {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		clients.Add(1)
		go func() {
			defer clients.Done()
			defer func() { <-sem }()
			// Started on one host, followed on the next: every stream
			// crosses hosts when there are several.
			o := runOne(ctx, bases[i%len(bases)], bases[(i+1)%len(bases)], token, ws, i)
			mu.Lock()
			defer mu.Unlock()
			res.Events += o.events
			res.Lost += o.lost
			if o.err != nil {
				res.Failed++
				fmt.Fprintf(logs, "load: workflow %d: %v\n", i, o.err)
				return
			}
			res.Completed++
			res.Rounds = append(res.Rounds, o.round)
		}()
	}
	clients.Wait()
	res.Wall = time.Since(start)
	res.Failed += cfg.Workflows - res.Completed - res.Failed // never started (the run's limit)
	return res, nil
}

// loadTenant makes a tenant of the run's own, with an admin and a
// workspace, and returns the admin's token.
func loadTenant(ctx context.Context, database string) (token, workspace string, err error) {
	db, err := store.Open(ctx, store.Config{URL: database})
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	t, err := db.CreateTenant(ctx, "load "+time.Now().UTC().Format(time.RFC3339Nano))
	if err != nil {
		return "", "", err
	}
	u, err := db.CreateUser(ctx, tenancy.User{TenantID: t.ID, Email: "load@agenthost.invalid", Name: "load", Admin: true})
	if err != nil {
		return "", "", err
	}
	w, err := db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: t.ID, Name: "load"})
	if err != nil {
		return "", "", err
	}
	exp := time.Now().Add(24 * time.Hour)
	_, secret, err := db.CreateToken(ctx, u.ID, "load", &exp)
	return secret, w.ID, err
}

// waitHealthy waits until the host answers, or has exited.
func waitHealthy(ctx context.Context, base string, exited <-chan error) error {
	for {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited before answering: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("not answering: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type oneResult struct {
	round  time.Duration
	events int
	lost   int
	err    error
}

// runOne starts a workflow on one host and follows its events on another
// until the round ends; every event id must follow the previous one.
func runOne(ctx context.Context, startOn, followOn, token, ws string, i int) oneResult {
	began := time.Now()
	req, _ := http.NewRequestWithContext(ctx, "POST", startOn+"/workspaces/"+ws+"/workflows",
		strings.NewReader(fmt.Sprintf(`{"prompt":"load workflow %d"}`, i)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return oneResult{err: err}
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return oneResult{err: fmt.Errorf("start: %d %s", resp.StatusCode, bytes.TrimSpace(raw))}
	}
	var w struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return oneResult{err: err}
	}
	req, _ = http.NewRequestWithContext(ctx, "GET", followOn+"/workflows/"+w.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return oneResult{err: err}
	}
	defer resp.Body.Close()
	var o oneResult
	var last int64
	var typ string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id, _ := strconv.ParseInt(line[4:], 10, 64)
			if id != last+1 {
				o.lost++ // a gap or a repeat
			}
			last = id
			o.events++
		case strings.HasPrefix(line, "event: "):
			typ = line[7:]
			switch typ {
			case "complete":
				o.round = time.Since(began)
				return o
			case "stopped", "error":
				o.err = fmt.Errorf("the round ended %s", typ)
				return o
			}
		}
	}
	o.err = fmt.Errorf("the event stream of %s on %s ended after event %d (%s): %v", w.ID, followOn, last, typ, sc.Err())
	return o
}

// warnings passes on a host's log lines of level WARN and above.
func warnings(w io.Writer) io.Writer {
	return slogFilter{w: w}
}

type slogFilter struct{ w io.Writer }

func (f slogFilter) Write(p []byte) (int, error) {
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if bytes.Contains(line, []byte("level="+slog.LevelWarn.String())) || bytes.Contains(line, []byte("level="+slog.LevelError.String())) {
			if _, err := f.w.Write(line); err != nil {
				return 0, err
			}
		}
	}
	return len(p), nil
}

// lockedWriter serialises writes of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// freeLoopbackAddr returns a loopback address with a port free right now,
// for a server started next (by another process, or by code that takes an
// address rather than a listener).
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

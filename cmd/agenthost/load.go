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
	"syscall"
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
// With -rolling it deploys meanwhile: each host in turn is stopped
// (SIGTERM) and started again, and every workflow must still complete.
//
//	agenthost load -database postgres://127.0.0.1/db -n 1000 [-hosts 2] [-concurrency 50] [-rolling]
func loadCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	database := fs.String("database", "", settingUsage("database", "here on this machine: the hosts share it; it is migrated and gets a tenant of its own"))
	n := fs.Int("n", 100, "workflows to run")
	hosts := fs.Int("hosts", 2, "serve hosts")
	concurrency := fs.Int("concurrency", 50, "workflows in flight at once")
	chunks := fs.Int("chunk", 8, "characters per streamed chunk of the scripted answer (smaller: more events)")
	timeout := fs.Duration("timeout", 30*time.Minute, "the whole run's limit")
	rolling := fs.Bool("rolling", false, "deploy while the load runs: stop each host in turn (SIGTERM) and start it again, round after round, until the workflows are done; clients move to another host as behind a load balancer, and every workflow must still complete")
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	if _, err := checkSettings("load", fs); err != nil {
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
	if *rolling && *hosts < 2 {
		return errors.New("load: -rolling needs at least two hosts")
	}
	res, err := runLoad(ctx, loadConfig{Database: *database, Workflows: *n, Hosts: *hosts, Concurrency: *concurrency, Chunk: *chunks, Rolling: *rolling, Log: stderr})
	if err != nil {
		return err
	}
	res.report(&figure.Reporter{W: stdout})
	if res.Failed > 0 || res.Lost > 0 || res.BadStops > 0 {
		return fmt.Errorf("load: %d failed, %d events lost or repeated, %d hosts stopped badly", res.Failed, res.Lost, res.BadStops)
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
	// Rolling restarts the hosts one after the other while the workflows
	// run (a deploy); the answers then stream slowly enough (RollingDelay
	// between chunks) for stops to meet rounds mid-answer.
	Rolling bool
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
	// Restarts counts host stops of a rolling run; BadStops those that
	// exited with an error; Restarted the rounds run again after their
	// host stopped (roundRestarted).
	Restarts, BadStops, Restarted int
	// Gapped counts completed workflows whose stream lost or repeated
	// events.
	Gapped  int
	Rolling bool
}

func (r loadResult) report(rep *figure.Reporter) {
	if r.Rolling {
		// A deploy's figures are its own: its rounds are slowed on
		// purpose, so its latencies say nothing of the load's. A
		// conversation is lost when its workflow did not complete (it was
		// stopped, failed, or never ended) or its stream had a gap.
		rep.Report("deploy.rolling.lost", float64(r.Failed+r.Gapped), "conversations")
		rep.Report("deploy.rolling.events.lost", float64(r.Lost), "events")
		rep.Report("deploy.rolling.completed", float64(r.Completed), "workflows")
		rep.Report("deploy.rolling.restarts", float64(r.Restarts), "host restarts")
		rep.Report("deploy.rolling.restarted", float64(r.Restarted), "rounds")
		return
	}
	rep.Report("load.completed", float64(r.Completed), "workflows")
	rep.Report("load.failed", float64(r.Failed), "workflows")
	rep.Report("load.round.p50.ms", figure.Millis(figure.Percentile(r.Rounds, 0.50)), "ms")
	rep.Report("load.round.p99.ms", figure.Millis(figure.Percentile(r.Rounds, 0.99)), "ms")
	rep.Report("load.events_per_s", float64(r.Events)/r.Wall.Seconds(), "events/s")
	rep.Report("load.events.lost", float64(r.Lost), "events")
}

// rollingDelay is the pause between chunks of a rolling run's answers: a
// round then streams for about two seconds, so a stop meets many mid-answer.
const rollingDelay = 120 * time.Millisecond

// loadHosts are the hosts of a run, started by startLoadHosts.
type loadHosts struct {
	// Bases are the hosts' API base URLs (…/api/v1), PIDs their process
	// ids (as started; a rolling run's restarts change them).
	Bases []string
	PIDs  []int
	// Token is an admin's API token of the run's own tenant, Workspace a
	// workspace of it.
	Token, Workspace string
	// Logs receives the hosts' warnings and errors (the run's log,
	// serialised).
	Logs io.Writer

	hosts   []*loadHost
	hostCtx context.Context
	wg      *sync.WaitGroup
	stop    func()
}

// Stop stops the hosts and the model and removes their files.
func (h *loadHosts) Stop() { h.stop() }

// startLoadHosts starts the scripted model (answering with reply, or the
// load's answer when reply is empty) and cfg.Hosts hosts on cfg.Database,
// and returns once every host answers.
func startLoadHosts(ctx context.Context, cfg loadConfig, reply llmtest.Step) (_ *loadHosts, err error) {
	if reply.Content == "" {
		reply = llmtest.Reply("Load test answer: the quick brown fox jumps over the lazy dog, and every event of this answer must arrive once.")
		if cfg.Rolling {
			reply = reply.WithChunkDelay(rollingDelay)
		}
	}
	model := llmtest.Start(llmtest.WithChunkSize(cfg.Chunk), llmtest.WithDefault(reply))
	var cleanup []func()
	h := &loadHosts{wg: &sync.WaitGroup{}, stop: func() {
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
	h.hostCtx = hostCtx
	cleanup = append(cleanup, func() {
		stopHosts()
		h.wg.Wait()
	})
	logs := &lockedWriter{w: cfg.Log}
	h.Logs = logs
	h.hosts = make([]*loadHost, cfg.Hosts)
	for i := range h.hosts {
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		plugins := filepath.Join(dir, "plugins-"+strconv.Itoa(i))
		if err := os.Mkdir(plugins, 0o700); err != nil {
			return nil, err
		}
		args := []string{"serve", "-database", cfg.Database, "-addr", addr, "-mcp-addr", "off", "-config", conf, "-plugins", plugins}
		if cfg.Rolling {
			// A short stop: rounds get a second to finish, then are
			// handed off, so a deploy meets many mid-answer.
			args = append(args, "-shutdown-timeout", "4s")
		}
		host := &loadHost{i: i, base: "http://" + addr, args: args}
		h.hosts[i] = host
		if err := host.start(ctx, hostCtx, cfg, logs, h.wg); err != nil {
			return nil, err
		}
		h.Bases = append(h.Bases, host.base+"/api/v1")
		h.PIDs = append(h.PIDs, host.cmd.Process.Pid)
	}
	return h, nil
}

// runLoad starts the model and the hosts, runs the workflows and stops
// everything.
func runLoad(ctx context.Context, cfg loadConfig) (loadResult, error) {
	lh, err := startLoadHosts(ctx, cfg, llmtest.Step{})
	if err != nil {
		return loadResult{}, err
	}
	defer lh.Stop()
	bases, token, ws, logs := lh.Bases, lh.Token, lh.Workspace, lh.Logs
	hosts, hostCtx, wg := lh.hosts, lh.hostCtx, lh.wg

	var mu sync.Mutex
	res := loadResult{Rolling: cfg.Rolling}
	sem := make(chan struct{}, cfg.Concurrency)
	start := time.Now()
	var clients sync.WaitGroup
	clientsDone := make(chan struct{})
	rolled := make(chan struct{})
	if cfg.Rolling {
		go func() {
			defer close(rolled)
			restarts, bad := rollHosts(ctx, hostCtx, hosts, cfg, logs, wg, clientsDone)
			mu.Lock()
			res.Restarts, res.BadStops = restarts, bad
			mu.Unlock()
		}()
	} else {
		close(rolled)
	}
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
			o := runOne(ctx, bases, i, token, ws)
			mu.Lock()
			defer mu.Unlock()
			res.Events += o.events
			res.Lost += o.lost
			res.Restarted += o.restarted
			if o.err != nil {
				res.Failed++
				fmt.Fprintf(logs, "load: workflow %d: %v\n", i, o.err)
				return
			}
			res.Completed++
			if o.lost > 0 {
				res.Gapped++
			}
			res.Rounds = append(res.Rounds, o.round)
		}()
	}
	clients.Wait()
	close(clientsDone)
	<-rolled
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
	round     time.Duration
	events    int
	lost      int
	restarted int
	err       error
}

// runOne starts a workflow on host i and follows its events on the next
// until the round ends; every event id must follow the previous one. A host
// that does not answer or is stopping (a rolling restart) is left for the
// next, as a load balancer would: the start is sent again there, and a
// stream that ends early is resumed there from its last id (Last-Event-ID).
func runOne(ctx context.Context, bases []string, i int, token, ws string) oneResult {
	began := time.Now()
	var w struct {
		ID string `json:"id"`
	}
	var err error
	for try := 0; ; try++ {
		base := bases[(i+try)%len(bases)]
		var retry bool
		retry, err = startOne(ctx, base, token, ws, i, &w)
		if err == nil {
			break
		}
		if !retry || try >= 20*len(bases) || ctx.Err() != nil {
			return oneResult{err: err}
		}
		time.Sleep(100 * time.Millisecond)
	}
	var o oneResult
	var last int64
	var typ string
	// A stream that moves on may be cut at every stop of a long rolling
	// run: only attempts that brought nothing new count toward giving up.
	for try, stalled := 1, 0; ; try++ {
		follow := bases[(i+try)%len(bases)]
		before := last
		done, err := followOne(ctx, follow, token, w.ID, &last, &typ, &o)
		if done {
			if o.err == nil {
				o.round = time.Since(began)
			}
			return o
		}
		if last > before {
			stalled = 0
		} else {
			stalled++
		}
		if stalled >= 50*len(bases) || ctx.Err() != nil {
			o.err = fmt.Errorf("the event stream of %s ended after event %d (%s): %v", w.ID, last, typ, err)
			return o
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startOne starts the workflow; retry says another host may take it.
func startOne(ctx context.Context, base, token, ws string, i int, w any) (retry bool, err error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/workspaces/"+ws+"/workflows",
		strings.NewReader(fmt.Sprintf(`{"prompt":"load workflow %d"}`, i)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return true, err
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return resp.StatusCode == http.StatusServiceUnavailable, fmt.Errorf("start: %d %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	return false, json.Unmarshal(raw, w)
}

// followOne reads the workflow's events after *last on one host; done when
// the round ended (o.err set unless it completed).
func followOne(ctx context.Context, base, token, id string, last *int64, typ *string, o *oneResult) (done bool, err error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/workflows/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if *last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(*last, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("events: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id, _ := strconv.ParseInt(line[4:], 10, 64)
			if id != *last+1 {
				o.lost++ // a gap or a repeat
			}
			*last = id
			o.events++
		case strings.HasPrefix(line, "event: "):
			*typ = line[7:]
			switch *typ {
			case "roundRestarted":
				o.restarted++
			case "complete":
				return true, nil
			case "stopped", "error":
				o.err = fmt.Errorf("the round ended %s", *typ)
				return true, nil
			}
		}
	}
	return false, sc.Err()
}

// loadHost is one serve process of the run, restarted in place by a
// rolling run.
type loadHost struct {
	i    int
	base string
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error
}

// start runs the host and waits until it answers.
func (h *loadHost) start(ctx, hostCtx context.Context, cfg loadConfig, logs io.Writer, wg *sync.WaitGroup) error {
	cmd := cfg.hostCommand(hostCtx, h.args...)
	cmd.Stdout, cmd.Stderr = io.Discard, warnings(logs)
	// Stopped like an operator would stop it; killed if it lingers.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("load: host %d: %w", h.i, err)
	}
	exited := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		exited <- cmd.Wait()
	}()
	h.mu.Lock()
	h.cmd, h.exited = cmd, exited
	h.mu.Unlock()
	if err := waitHealthy(ctx, h.base, exited); err != nil {
		return fmt.Errorf("load: host %d: %w", h.i, err)
	}
	return nil
}

// restart stops the host as a deploy does (SIGTERM, then waits for it to
// exit) and starts it again; clean says its stop ended without an error.
func (h *loadHost) restart(ctx, hostCtx context.Context, cfg loadConfig, logs io.Writer, wg *sync.WaitGroup) (clean bool, err error) {
	h.mu.Lock()
	cmd, exited := h.cmd, h.exited
	h.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return false, err
	}
	var stopErr error
	select {
	case stopErr = <-exited:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	if stopErr != nil {
		fmt.Fprintf(logs, "load: host %d: its stop: %v\n", h.i, stopErr)
	}
	return stopErr == nil, h.start(ctx, hostCtx, cfg, logs, wg)
}

// rollHosts restarts the hosts one after the other, pass after pass, until
// the clients are done (at least one whole pass); it returns the restarts
// and how many stops ended with an error.
func rollHosts(ctx, hostCtx context.Context, hosts []*loadHost, cfg loadConfig, logs io.Writer, wg *sync.WaitGroup, clientsDone <-chan struct{}) (restarts, bad int) {
	for pass := 0; ; pass++ {
		for _, h := range hosts {
			if pass > 0 {
				select {
				case <-clientsDone:
					return restarts, bad
				default:
				}
			}
			// Let rounds get under way on the host before it stops.
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return restarts, bad
			}
			clean, err := h.restart(ctx, hostCtx, cfg, logs, wg)
			restarts++
			if !clean {
				bad++
			}
			if err != nil {
				fmt.Fprintf(logs, "load: restarting host %d: %v\n", h.i, err)
				return restarts, bad
			}
		}
	}
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

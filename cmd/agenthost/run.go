package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agenthost/agenthost/sdk"
)

// runOptions are the flags of `agenthost run`.
type runOptions struct {
	url, token, workspace, tools, tags string
	files                              []string
	indexTimeout                       time.Duration
	maxCost                            float64
}

// runCmd is `agenthost run "prompt" -file x.pdf`: a workflow run from the
// terminal through the Go SDK. It uploads the files, waits until they are
// indexed, starts the workflow with the prompt and the files, and follows
// its events: tool calls with their arguments, duration and outcome, and
// the cost on stderr (an updating status line on a terminal, plain lines
// otherwise), the answer on stdout. It exits 0 when the workflow completes
// and with an error when it fails or is stopped; Ctrl-C stops it on the
// server.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: agenthost run \"PROMPT\" [-file FILE]... [-workspace WS] [-tools NAME,…]\n\n"+
			"Runs a workflow on a server and follows it: tool calls and cost on stderr, the answer on stdout.\n"+
			"The server and token come from -url and -token or AGENTHOST_URL and AGENTHOST_TOKEN.\n\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.url, "url", "http://127.0.0.1:8080", settingUsage("url"))
	fs.StringVar(&o.token, "token", "", settingUsage("token"))
	fs.StringVar(&o.workspace, "workspace", "", settingUsage("workspace"))
	fs.StringVar(&o.tools, "tools", "", "comma-separated tools the workspace's tool set must offer; the run is refused before anything is uploaded when one is missing")
	fs.StringVar(&o.tags, "tags", "", "comma-separated tags for the uploaded files")
	fs.Func("file", "a file to upload and give the workflow (repeatable)", func(s string) error {
		o.files = append(o.files, s)
		return nil
	})
	fs.Float64Var(&o.maxCost, "max-cost", 0, "the most the round may spend, in CHF (the lower of it and the server's limit applies); 0: the server's")
	fs.DurationVar(&o.indexTimeout, "index-timeout", 10*time.Minute, "how long to wait for the files to be indexed")
	// The prompt may come before, between or after the flags.
	var prompts []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		prompts = append(prompts, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if _, err := checkSettings("run", fs); err != nil {
		return err
	}
	switch {
	case len(prompts) == 0 || strings.TrimSpace(prompts[0]) == "":
		return errors.New(`run: want a prompt: agenthost run "PROMPT" [-file FILE]`)
	case len(prompts) > 1:
		return fmt.Errorf("run: want one prompt, got %d (quote it: agenthost run \"%s\")", len(prompts), strings.Join(prompts, " "))
	case o.maxCost < 0:
		return fmt.Errorf("run: -max-cost %v: want an amount of CHF, 0 or more", o.maxCost)
	case o.token == "":
		return errors.New("run: no API token: set AGENTHOST_TOKEN or pass -token (agenthost admin token makes one)")
	}
	for _, f := range o.files {
		if st, err := os.Stat(f); err != nil {
			return fmt.Errorf("run: %w", err)
		} else if !st.Mode().IsRegular() {
			return fmt.Errorf("run: %s is not a regular file", f)
		}
	}
	c, err := sdk.New(o.url, sdk.WithToken(o.token), sdk.WithUserAgent("agenthost-run"))
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	d := newRunDisplay(stdout, stderr, runIsTerminal(stderr))
	defer d.finish()
	err = runWorkflow(ctx, c, d, o, prompts[0])
	if err != nil && ctx.Err() != nil && !strings.HasPrefix(err.Error(), "interrupted") {
		return fmt.Errorf("interrupted before the workflow started: %w", err)
	}
	return err
}

func runWorkflow(ctx context.Context, c *sdk.Client, d *runDisplay, o runOptions, prompt string) error {
	ws, err := runWorkspace(ctx, c, o.workspace)
	if err != nil {
		return err
	}
	if o.tools != "" {
		if err := runCheckTools(ctx, c, ws, o.tools); err != nil {
			return err
		}
	}
	var fileIDs []string
	for _, path := range o.files {
		id, err := runUpload(ctx, c, d, ws, path, o.tags)
		if err != nil {
			return err
		}
		fileIDs = append(fileIDs, id)
	}
	for i, id := range fileIDs {
		if err := runWaitIndexed(ctx, c, d, id, filepath.Base(o.files[i]), o.indexTimeout); err != nil {
			return err
		}
	}
	start := sdk.StartRequest{Prompt: prompt, FileIDs: fileIDs}
	if o.maxCost > 0 {
		start.MaxCostCHF = &o.maxCost
	}
	wf, err := c.StartWorkflow(ctx, ws, start)
	if err != nil {
		return fmt.Errorf("starting the workflow: %w", err)
	}
	d.step("workflow %s started in workspace %s", wf.ID, ws)
	end, err := runFollow(ctx, c, d, wf.ID)
	if ctx.Err() != nil {
		// Ctrl-C: the round is stopped on the server, not left running.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, serr := c.StopWorkflow(stopCtx, wf.ID); serr != nil {
			var apiErr *sdk.Error
			if !errors.As(serr, &apiErr) || apiErr.Status != 409 {
				return fmt.Errorf("interrupted; stopping workflow %s failed: %w", wf.ID, serr)
			}
		}
		d.step("interrupted: workflow %s stopped on the server", wf.ID)
		return fmt.Errorf("interrupted: workflow %s stopped", wf.ID)
	}
	if err != nil {
		return fmt.Errorf("following workflow %s: %w", wf.ID, err)
	}
	d.summary(runCost(ctx, c, wf, d))
	data, _ := end.Payload.(*sdk.EndData)
	if data == nil {
		data = &sdk.EndData{}
	}
	switch end.Type {
	case sdk.EventComplete:
		return nil
	case sdk.EventStopped:
		return fmt.Errorf("workflow %s was stopped: %s", wf.ID, runOr(data.Reason, "no reason given"))
	default:
		return fmt.Errorf("workflow %s failed: %s", wf.ID, runOr(data.Message, "no message"))
	}
}

// runWorkspace is ws, checked to be one of the caller's, or the caller's
// only workspace.
func runWorkspace(ctx context.Context, c *sdk.Client, ws string) (string, error) {
	list, err := c.ListWorkspaces(ctx)
	if err != nil {
		return "", fmt.Errorf("listing workspaces: %w", err)
	}
	var names []string
	for _, w := range list {
		if w.ID == ws {
			return ws, nil
		}
		names = append(names, w.ID+" ("+w.Name+")")
	}
	switch {
	case len(list) == 0:
		return "", errors.New("the token's user has no workspace")
	case ws != "":
		return "", fmt.Errorf("workspace %s is not one of the token's workspaces: %s", ws, strings.Join(names, ", "))
	case len(list) == 1:
		return list[0].ID, nil
	}
	return "", fmt.Errorf("the token's user has %d workspaces: pass -workspace (%s)", len(list), strings.Join(names, ", "))
}

// runCheckTools refuses a run whose workspace lacks a tool the caller needs.
func runCheckTools(ctx context.Context, c *sdk.Client, ws, want string) error {
	tools, err := c.ListWorkspaceTools(ctx, ws)
	if err != nil {
		return fmt.Errorf("listing the workspace's tools: %w", err)
	}
	var have, missing []string
	for _, t := range tools {
		have = append(have, t.Name)
	}
	for _, name := range strings.Split(want, ",") {
		if name = strings.TrimSpace(name); name != "" && !slices.Contains(have, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(have)
		return fmt.Errorf("workspace %s does not offer %s (its tools: %s)", ws, strings.Join(missing, ", "), strings.Join(have, ", "))
	}
	return nil
}

func runUpload(ctx context.Context, c *sdk.Client, d *runDisplay, ws, path, tags string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	name := filepath.Base(path)
	d.status("uploading %s", name)
	up, err := c.UploadFile(ctx, ws, sdk.UploadFileRequest{File: f, FileName: name, Tags: tags})
	if err != nil {
		return "", fmt.Errorf("uploading %s: %w", path, err)
	}
	how := "uploaded"
	if up.Existing {
		how = "already there"
	}
	d.step("%s %s (file %s, %s)", how, name, up.ID, runByteSize(up.Size))
	return up.ID, nil
}

// runWaitIndexed polls the file's indexing state until it is indexed.
func runWaitIndexed(ctx context.Context, c *sdk.Client, d *runDisplay, id, name string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	wait := 100 * time.Millisecond
	last := ""
	for {
		st, err := c.GetFileIndex(ctx, id)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("%s is not indexed after %s (last state: %s)", name, limit, runOr(last, "unknown"))
			}
			return fmt.Errorf("indexing state of %s: %w", name, err)
		}
		switch st.Status {
		case "indexed":
			d.step("indexed %s", name)
			return nil
		case "failed":
			return fmt.Errorf("%s could not be indexed: %s", name, runOr(st.Error, "no reason given"))
		}
		if now := strings.TrimSpace(st.Status + " " + st.Note); now != last {
			last = now
			d.status("indexing %s: %s", name, now)
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s is not indexed after %s (last state: %s)", name, limit, runOr(last, "unknown"))
			}
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Second)
	}
}

// follow shows the workflow's events until its round ends, and returns the
// event that ended it.
func runFollow(ctx context.Context, c *sdk.Client, d *runDisplay, id string) (sdk.Event, error) {
	stream := c.Events(ctx, id, 0)
	defer stream.Close()
	type next struct {
		ev  sdk.Event
		err error
	}
	events := make(chan next)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			ev, err := stream.Next()
			select {
			case events <- next{ev, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return sdk.Event{}, ctx.Err()
		case <-tick.C:
			d.tick()
		case n := <-events:
			if n.err != nil {
				return sdk.Event{}, n.err
			}
			d.event(n.ev)
			if n.ev.Type.Terminal() {
				return n.ev, nil
			}
		}
	}
}

// runCost is the workflow's exact cost from the usage records, or the last
// progress event's figure when the report cannot be read.
func runCost(ctx context.Context, c *sdk.Client, wf *sdk.Workflow, d *runDisplay) string {
	from := time.Now().Add(-24 * time.Hour)
	if wf.StartedAt != nil {
		from = wf.StartedAt.Add(-time.Minute)
	}
	report, err := c.GetUsageReport(ctx, &sdk.GetUsageReportParams{By: "workflow", From: from.UTC().Format(time.RFC3339)})
	if err == nil {
		for _, row := range report.Rows {
			if len(row.Keys) == 1 && row.Keys[0] == wf.ID {
				return "CHF " + row.CostCHF
			}
		}
		return "CHF 0.00"
	}
	return fmt.Sprintf("CHF %.6f (approximate: %v)", d.costCHF, err)
}

func runOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func runByteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// runIsTerminal reports whether w is a character device (a terminal), where
// the status line can be redrawn in place.
func runIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

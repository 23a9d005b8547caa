package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/figure"
	"github.com/agenthost/agenthost/host/testenv"
)

// TestLoadTwoHosts: a small load over two hosts on one PostgreSQL: every
// workflow completes, and every client, following its workflow on the other
// host, sees every event once and in order.
func TestLoadTwoHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	database := testenv.Postgres(t)
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	res, err := runLoad(ctx, loadConfig{Database: database, Workflows: 40, Hosts: 2, Concurrency: 10, Chunk: 4, Log: &logs, Command: testBinary})
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 40 || res.Failed != 0 || res.Lost != 0 || res.Events < 40*6 {
		t.Fatalf("%+v\n%s", res, logs.String())
	}
}

// TestLoadRollingRestart (issue 32 item 2): a deploy under load: while
// workflows run on two hosts sharing PostgreSQL, each host in turn gets
// SIGTERM and starts again. No conversation is lost: every workflow
// completes, every stream (moving to the other host when its host stops)
// sees every event once, and every stop is clean.
func TestLoadRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and restarts two servers")
	}
	database := testenv.Postgres(t)
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	res, err := runLoad(ctx, loadConfig{Database: database, Workflows: 40, Hosts: 2, Concurrency: 10, Chunk: 8, Rolling: true, Log: &logs, Command: testBinary})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d host restarts, %d rounds handed off and run again, %d events", res.Restarts, res.Restarted, res.Events)
	if res.Completed != 40 || res.Failed != 0 || res.Lost != 0 || res.BadStops != 0 || res.Restarts < 2 {
		t.Fatalf("%+v\n%s", res, logs.String())
	}
	// The stops met rounds mid-answer, which went on elsewhere.
	if res.Restarted == 0 {
		t.Fatalf("no round was running at any stop: %+v", res)
	}
}

// TestLoadRefusesRemoteDatabase: the load command runs against this machine
// only, and refuses bad flags before anything starts.
func TestLoadRefusesRemoteDatabase(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-database", "postgres://db.example.com/x"},
		{"-database", "mysql://127.0.0.1/x"},
		{"-database", "postgres://127.0.0.1/x", "-n", "0"},
	} {
		if err := loadCmd(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("load %v accepted", args)
		}
	}
}

// BenchmarkLoad runs the load command's workload (AGENTHOST_LOAD_N
// workflows, 60 by default) over two hosts on PostgreSQL and prints its
// figures.
func BenchmarkLoad(b *testing.B) {
	n := 60
	if v, err := strconv.Atoi(os.Getenv("AGENTHOST_LOAD_N")); err == nil && v > 0 {
		n = v
	}
	database := testenv.Postgres(b)
	var logs bytes.Buffer
	for range b.N {
		res, err := runLoad(context.Background(), loadConfig{Database: database, Workflows: n, Hosts: 2, Concurrency: 50, Chunk: 8, Log: &logs, Command: testBinary})
		if err != nil {
			b.Fatal(err)
		}
		if res.Failed > 0 || res.Lost > 0 {
			b.Fatalf("%+v\n%s", res, strings.TrimSpace(logs.String()))
		}
		res.report(&figure.Reporter{})
	}
}

// BenchmarkLoadRolling is BenchmarkLoad with a rolling restart of the two
// hosts while it runs; deploy.rolling.lost (workflows that did not
// complete) must be 0.
func BenchmarkLoadRolling(b *testing.B) {
	database := testenv.Postgres(b)
	var logs bytes.Buffer
	for range b.N {
		res, err := runLoad(context.Background(), loadConfig{Database: database, Workflows: 60, Hosts: 2, Concurrency: 20, Chunk: 8, Rolling: true, Log: &logs, Command: testBinary})
		if err != nil {
			b.Fatal(err)
		}
		res.report(&figure.Reporter{})
		if res.Failed > 0 || res.Lost > 0 || res.BadStops > 0 {
			b.Fatalf("%+v\n%s", res, strings.TrimSpace(logs.String()))
		}
	}
}

// testBinary runs this test binary as agenthost (see TestMain).
func testBinary(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "AGENTHOST_TEST_MAIN=1")
	return cmd
}

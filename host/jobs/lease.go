package jobs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/agenthost/agenthost/host/store"
)

// Defaults of Config.HeartbeatInterval and Config.HostLease.
//
// River alone rescues the job of a dead worker once it has been running for
// RescueAfter (15 min by default, which must exceed the job timeout so that
// live jobs are not run twice). A file being indexed when its process was
// killed then stayed pending for 15 minutes. A job's liveness is instead
// tied to its host's heartbeat: a process that works jobs beats every
// HeartbeatInterval, and a running job whose host has not beaten for
// HostLease is handed back at once by any working process. The lease is
// generous against the interval (7 missed beats) so that a live host on a
// loaded machine, or waiting for SQLite's write lock, is not taken for dead.
const (
	DefaultHeartbeatInterval = 2 * time.Second
	DefaultHostLease         = 15 * time.Second
)

// RescueMessage starts the error recorded on a job whose host stopped
// beating; Job.Rescued reports it to the next attempt.
const RescueMessage = "retrying after restart: the worker process running this job stopped"

// riverRescueMessage is the error River's own rescuer records (after
// RescueAfter), which is the same event seen later.
const riverRescueMessage = "Stuck job rescued by JobRescuer"

// isRescue reports whether an attempt error records a rescue from a dead
// worker.
func isRescue(msg string) bool {
	return strings.HasPrefix(msg, RescueMessage) || msg == riverRescueMessage
}

// NewHostID returns a fresh host id: the host name and process id for
// people reading it, and random bytes so that two processes never share
// one (River requires its client ids to be unique, and a restarted process
// is a new host). A process that names itself elsewhere too (its trace
// spans' service.instance.id) makes one and passes it as Config.HostID.
func NewHostID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	host, _ := os.Hostname()
	if len(host) > 40 {
		host = host[:40]
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// jobLister is the part of River's client the lease keeper reads with.
type jobLister interface {
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
}

// leaseKeeper beats for this host and hands back the running jobs of hosts
// that stopped beating.
type leaseKeeper struct {
	db       *sql.DB
	dialect  store.Dialect
	exec     riverdriver.Executor
	jobs     jobLister
	id       string
	interval time.Duration
	lease    time.Duration
	logger   *slog.Logger

	stop chan struct{}
	done sync.WaitGroup
}

// nowMillis is the database's clock in Unix milliseconds, as SQL.
func (k *leaseKeeper) nowMillis() string {
	if k.dialect == store.Postgres {
		return `CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)`
	}
	return `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`
}

func (k *leaseKeeper) rebind(q string) string {
	return (&progressTable{dialect: k.dialect}).rebind(q)
}

// beat records that this host is alive.
func (k *leaseKeeper) beat(ctx context.Context) error {
	now := k.nowMillis()
	_, err := k.db.ExecContext(ctx, k.rebind(`INSERT INTO job_hosts (id, started_at, heartbeat_at) VALUES (?, `+now+`, `+now+`)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`), k.id)
	if err != nil {
		return fmt.Errorf("jobs: heartbeat: %w", err)
	}
	return nil
}

// start beats once (so that no job of this host is ever seen without a
// heartbeat), rescues what dead hosts left, and keeps doing both until
// close.
func (k *leaseKeeper) start(ctx context.Context) error {
	if err := k.beat(ctx); err != nil {
		return err
	}
	k.stop = make(chan struct{})
	k.done.Add(1)
	go func() {
		defer k.done.Done()
		ctx := context.WithoutCancel(ctx)
		t := time.NewTicker(k.interval)
		defer t.Stop()
		for {
			if err := k.beat(ctx); err != nil {
				k.logger.Warn("jobs: heartbeat failed", "host", k.id, "err", err)
			}
			if n, err := k.rescue(ctx); err != nil {
				k.logger.Warn("jobs: rescuing the jobs of stopped hosts failed", "err", err)
			} else if n > 0 {
				k.logger.Info("jobs: handed back the jobs of stopped worker processes", "jobs", n)
			}
			select {
			case <-k.stop:
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// close stops beating and removes this host's row: its jobs were handed back
// by River's stop already.
func (k *leaseKeeper) close(ctx context.Context) {
	if k.stop == nil {
		return
	}
	close(k.stop)
	k.done.Wait()
	k.stop = nil
	if _, err := k.db.ExecContext(context.WithoutCancel(ctx), k.rebind(`DELETE FROM job_hosts WHERE id = ?`), k.id); err != nil {
		k.logger.Warn("jobs: removing this host's heartbeat", "host", k.id, "err", err)
	}
}

// liveHosts returns the hosts that beat within the lease, and deletes the
// rows of hosts dead for long (ten leases), which nothing needs any more.
func (k *leaseKeeper) liveHosts(ctx context.Context) (map[string]bool, error) {
	now := k.nowMillis()
	if _, err := k.db.ExecContext(ctx, k.rebind(`DELETE FROM job_hosts WHERE heartbeat_at < `+now+` - ?`), 10*k.lease.Milliseconds()); err != nil {
		return nil, fmt.Errorf("jobs: forgetting dead hosts: %w", err)
	}
	rows, err := k.db.QueryContext(ctx, k.rebind(`SELECT id FROM job_hosts WHERE heartbeat_at >= `+now+` - ?`), k.lease.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("jobs: reading hosts: %w", err)
	}
	defer rows.Close()
	live := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("jobs: reading hosts: %w", err)
		}
		live[id] = true
	}
	return live, rows.Err()
}

// rescueBatch bounds the running jobs read per pass; more are taken on the
// next pass, seconds later.
const rescueBatch = 1000

// rescue hands back every running job whose host is not alive: to be run
// again at once (the job did not fail; its process died), discarded if it
// had no attempt left, cancelled if a cancel was asked for. It returns how
// many jobs it handed back. A job is compared on its attempt start, so one
// that another process took meanwhile is left alone.
func (k *leaseKeeper) rescue(ctx context.Context) (int, error) {
	res, err := k.jobs.JobList(ctx, river.NewJobListParams().States(rivertype.JobStateRunning).First(rescueBatch))
	if err != nil {
		return 0, fmt.Errorf("jobs: listing running jobs: %w", err)
	}
	if len(res.Jobs) == 0 {
		return 0, nil
	}
	live, err := k.liveHosts(ctx)
	if err != nil {
		return 0, err
	}
	now := time.Now().UTC()
	n := 0
	for _, job := range res.Jobs {
		if job.AttemptedAt == nil || len(job.AttemptedBy) == 0 {
			continue
		}
		host := job.AttemptedBy[len(job.AttemptedBy)-1]
		// A job started less than a lease ago may belong to a host that has
		// just begun (its first beat precedes its first fetch, but a host
		// of an older version never beats): give it the lease.
		if live[host] || now.Sub(*job.AttemptedAt) < k.lease {
			continue
		}
		msg, _ := json.Marshal(rivertype.AttemptError{
			At:      now,
			Attempt: max(job.Attempt, 0),
			Error:   fmt.Sprintf("%s (host %s, no heartbeat for %s)", RescueMessage, host, k.lease),
		})
		var meta struct {
			CancelAttemptedAt time.Time `json:"cancel_attempted_at"`
		}
		_ = json.Unmarshal(job.Metadata, &meta)
		state, finalized, scheduled := rivertype.JobStateAvailable, (*time.Time)(nil), now
		switch {
		case !meta.CancelAttemptedAt.IsZero():
			state, finalized, scheduled = rivertype.JobStateCancelled, &now, job.ScheduledAt
		case job.Attempt >= job.MaxAttempts:
			state, finalized, scheduled = rivertype.JobStateDiscarded, &now, job.ScheduledAt
		}
		// The horizon just past this attempt's start makes the update a
		// compare-and-set: an attempt started since does not match.
		if _, err := k.exec.JobRescueMany(ctx, &riverdriver.JobRescueManyParams{
			ID:           []int64{job.ID},
			Error:        [][]byte{msg},
			FinalizedAt:  []*time.Time{finalized},
			ScheduledAt:  []time.Time{scheduled},
			State:        []string{string(state)},
			StuckHorizon: job.AttemptedAt.Add(time.Millisecond),
		}); err != nil {
			return n, fmt.Errorf("jobs: handing back job %d: %w", job.ID, err)
		}
		k.logger.Warn("jobs: handed back the job of a stopped worker process", "job", job.ID, "kind", job.Kind, "host", host, "state", state)
		n++
	}
	return n, nil
}

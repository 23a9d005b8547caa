package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/agenthost/agenthost/host/store"
)

// ErrNotInJob is returned by Progress when ctx is not the context of a
// running job.
var ErrNotInJob = errors.New("jobs: not called from a running job")

// ProgressReport is the latest progress a job reported.
type ProgressReport struct {
	// Fraction is in [0, 1].
	Fraction float64
	// Message says what the job is doing, for people.
	Message string
	// Attempt is the attempt that reported it; after a retry, a report of an
	// earlier attempt stays until the new attempt reports.
	Attempt int
	// At is when it was reported (zero if the job never reported).
	At time.Time
}

// Progress records how far the running job is: fraction in [0, 1] (clamped)
// and a short message. Readers see the latest report through Queue.Get. It
// costs one upsert, so call it at most a few times per second. It returns
// ErrNotInJob when ctx is not a job's context; a failed write is returned too,
// but a job need not fail because its progress could not be recorded.
func Progress(ctx context.Context, fraction float64, message string) error {
	r, ok := ctx.Value(reporterKey{}).(*reporter)
	if !ok {
		return ErrNotInJob
	}
	if math.IsNaN(fraction) {
		fraction = 0
	}
	fraction = min(1, max(0, fraction))
	if err := r.p.put(ctx, r.id, r.attempt, fraction, message); err != nil {
		return fmt.Errorf("jobs: progress of job %d: %w", r.id, err)
	}
	return nil
}

type reporterKey struct{}

// reporter is what Progress finds in a job's context.
type reporter struct {
	p       *progressTable
	id      int64
	attempt int
}

// progressMiddleware puts a reporter into every job's context.
type progressMiddleware struct {
	river.MiddlewareDefaults
	p *progressTable
}

func (m *progressMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	return doInner(context.WithValue(ctx, reporterKey{}, &reporter{p: m.p, id: job.ID, attempt: job.Attempt}))
}

// progressTable reads and writes agenthost's job_progress table.
type progressTable struct {
	db      *sql.DB
	dialect store.Dialect
}

func (p *progressTable) put(ctx context.Context, id int64, attempt int, fraction float64, message string) error {
	_, err := p.db.ExecContext(ctx, p.rebind(`INSERT INTO job_progress (job_id, attempt, fraction, message, updated_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (job_id) DO UPDATE SET attempt = excluded.attempt, fraction = excluded.fraction,
			message = excluded.message, updated_at = excluded.updated_at`),
		id, attempt, fraction, message, time.Now().UnixMicro())
	return err
}

func (p *progressTable) get(ctx context.Context, id int64) (ProgressReport, error) {
	var (
		r  ProgressReport
		us int64
	)
	err := p.db.QueryRowContext(ctx, p.rebind(`SELECT attempt, fraction, message, updated_at FROM job_progress WHERE job_id = ?`), id).
		Scan(&r.Attempt, &r.Fraction, &r.Message, &us)
	if errors.Is(err, sql.ErrNoRows) {
		return ProgressReport{}, nil
	}
	if err != nil {
		return ProgressReport{}, err
	}
	r.At = time.UnixMicro(us).UTC()
	return r, nil
}

// sweep deletes the progress of jobs River's cleaner has removed.
func (p *progressTable) sweep(ctx context.Context) (int64, error) {
	res, err := p.db.ExecContext(ctx, `DELETE FROM job_progress
		WHERE NOT EXISTS (SELECT 1 FROM river_job WHERE river_job.id = job_progress.job_id)`)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// rebind turns ? placeholders into PostgreSQL's $n. The queries here have no
// ? inside literals.
func (p *progressTable) rebind(q string) string {
	if p.dialect != store.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// sweepArgs is this package's own periodic job: it keeps job_progress from
// growing with rows of jobs that no longer exist.
type sweepArgs struct{}

func (sweepArgs) Kind() string { return "agenthost.jobs.progress_sweep" }

// sweepInterval is how often the leader sweeps; orphans are harmless, so
// rarely is enough.
const sweepInterval = time.Hour

func (p *progressTable) sweepWorker(w *river.Workers) error {
	return river.AddWorkerSafely(w, river.WorkFunc(func(ctx context.Context, _ *river.Job[sweepArgs]) error {
		_, err := p.sweep(ctx)
		return err
	}))
}

func sweepPeriodic() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(sweepInterval),
		func() (river.JobArgs, *river.InsertOpts) {
			return sweepArgs{}, &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: sweepInterval}}
		}, nil)
}

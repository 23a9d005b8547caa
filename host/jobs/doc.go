// Package jobs is agenthost's persistent job queue: indexing and other
// background work are enqueued here and worked by `agenthost serve` and by
// any number of `agenthost worker` processes. It is a thin layer over River
// (github.com/riverqueue/river), which does the queueing, locking, retries,
// unique jobs, cancellation and rescue of jobs whose worker died; this
// package adds typed registration without River types, progress reports,
// agenthost's defaults, and one API over both databases of package store.
//
// # Guarantees
//
//   - A job survives restarts: it is a row in the database from Enqueue on.
//   - A job runs at most once at a time. A job that returns an error is retried
//     with exponential backoff (Config.RetryBase doubling up to
//     Config.RetryCap, ±10% jitter) until MaxAttempts, then it is discarded
//     with every attempt's error kept (Info.Errors).
//   - A job whose process died (kill -9, power loss) is handed back within
//     seconds: every working process beats in agenthost's job_hosts table
//     every Config.HeartbeatInterval (2 s), and every working process looks
//     each interval for running jobs whose process (River's attempted_by)
//     has not beaten for Config.HostLease (15 s); those are made available
//     again at once, with an attempt error that starts with RescueMessage
//     (the next attempt sees Job.Rescued). A restarted serve therefore
//     resumes its killed predecessor's jobs once the lease has run out. The
//     crash test measures ~1.2-1.4 s from kill -9 to completion with a 1 s
//     lease. River's own rescue (after Config.RescueAfter, by the leader)
//     stays as the backstop. Work is therefore at least once; a worker
//     whose effect must happen once makes it idempotent (keyed by Job.ID,
//     say).
//   - Cancel stops a job that has not run and cancels the context of a running
//     one (its worker must return when ctx is done).
//
// # Databases
//
// PostgreSQL: River's pgx driver on the store's pool. New jobs wake workers
// through LISTEN/NOTIFY, so a job enqueued to an idle queue starts in about
// 3 ms (BenchmarkJobStart: p50 2.7 ms, p90 6.4 ms). A working Queue holds one
// pool connection for LISTEN; pgxpool's default size is max(4, NumCPU), which
// the store's URL can raise (pool_max_conns) for many concurrent jobs.
//
// SQLite (the embedded store): River's riversqlite driver on the store's
// database/sql handle. SQLite has no LISTEN/NOTIFY; River emulates it with an
// outbox table (river_notification) that every client polls every 50 ms, a
// fixed interval of the driver. A job enqueued to an idle queue therefore
// waits for the next outbox poll, 25 ms on average and 50 ms at most, also
// across processes (p50 25 ms, p90 47 ms, max ~55 ms measured). The fallback
// FetchPollInterval, which re-scans the job table for jobs that no wake-up
// announced (missed notifications, retries due within River's 5 s scheduler
// pass), is 500 ms on SQLite against River's 1 s: a fetch is one short local
// write transaction, and it halves the wait of quick retries. Shorter would
// buy little the outbox does not already give, for more write-lock traffic.
//
// On both, the fetch cooldown is 20 ms instead of River's 100 ms (see
// queue.go for the measurements).
//
// River's SQLite driver documentation advises one open connection, because
// River's concurrent maintenance queries otherwise meet "database is locked".
// The store instead opens SQLite in WAL mode with busy_timeout(10000) and
// immediate transactions (_txlock=immediate): every transaction takes the
// write lock when it begins, so a second writer waits on busy_timeout rather
// than failing on a lock upgrade, and readers never block. That lets the
// queue share the handle with the rest of agenthost, and lets several
// processes (serve and workers) use one database file, which a one-connection
// pool could not make safe anyway. The tests (run with -race too) saw no
// SQLITE_BUSY, including with a worker in another process killed mid-job.
//
// # Costs
//
// Enqueue is one insert transaction (plus a NOTIFY or an outbox row). Get is
// two indexed reads. Progress is one upsert per call into agenthost's
// job_progress table, so report at most a few times per second. An idle
// working Queue polls the database: one job fetch per queue per second on
// PostgreSQL and per 500 ms on SQLite (plus the 50 ms outbox read there), and
// River's leader election and maintenance every few seconds.
//
// # Schema
//
// River keeps its own tables (river_job, river_leader, …) and migrations;
// [Migrate] applies them. The job_progress table belongs to agenthost's
// migrations (migrations/<dialect>/00003_jobs.sql). It has no foreign key to
// river_job, because the two migration sets are applied independently; a
// periodic job of this package deletes progress rows whose job River's
// cleaner has removed (completed and cancelled jobs after 24 h, discarded ones
// after 7 days).
package jobs

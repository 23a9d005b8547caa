package datasources_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/datasources/dsrecord"
	"github.com/agenthost/agenthost/host/datasources/syncjob"
	"github.com/agenthost/agenthost/host/jobs"
	"github.com/agenthost/agenthost/host/testenv"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestSyncAcrossADatabaseOutage: PostgreSQL goes away for a few seconds
// while a sync downloads (the connections through a proxy are cut, as a
// database restart cuts them, and new ones refused until it is back). The
// sync's job is retried once the database answers again and mirrors every
// file once: nothing lost, nothing twice, and the source ends idle.
func TestSyncAcrossADatabaseOutage(t *testing.T) {
	proxied, _, px := testenv.PostgresBehindProxy(t)
	e := newEnvWith(t, worldtest.Options{DatabaseURL: proxied})
	ctx := context.Background()
	if err := jobs.Migrate(ctx, e.w.DB); err != nil {
		t.Fatal(err)
	}
	var svc = e.svc
	reg := jobs.NewRegistry()
	syncjob.Register(reg, func() syncjob.Worker { return svc })
	q, err := jobs.New(e.w.DB, jobs.Config{Registry: reg, Work: true, Queues: map[string]int{syncjob.QueueName: 1}, RetryBase: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop(context.Background()) })
	svc = e.service(syncjob.Queue{Q: q, MaxAttempts: 25})
	e.svc = svc
	d := e.project(t, false)

	// The first download cuts the database for 3 s.
	var once sync.Once
	restored := make(chan struct{})
	e.site.OnContent(func() {
		once.Do(func() {
			px.Cut()
			time.AfterFunc(3*time.Second, func() { px.Restore(); close(restored) })
		})
	})
	got, err := svc.SyncNow(ctx, e.alice, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Waiting for the job needs the database: from after it is back.
	<-restored
	if info := waitJob(t, q, got.QueueJobID); info.State != jobs.StateCompleted {
		t.Fatalf("the sync's job ended %s: %+v", info.State, info.Errors)
	}
	got, err = svc.Get(ctx, e.alice, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != dsrecord.SyncIdle || got.LastSynced == nil || got.LastError != "" || !strings.HasPrefix(got.LastSummary, "3 new") {
		t.Fatalf("after the outage: %+v", got)
	}
	for name, content := range map[string][]byte{"camlidl.pdf": e.pdf, "notes.txt": e.note, "checklist.txt": []byte("- build\n- test\n")} {
		fs := e.filesNamed(t, name)
		if len(fs) != 1 {
			t.Fatalf("%d files named %s after the outage", len(fs), name)
		}
		if !bytes.Equal(e.read(t, fs[0].ID), content) {
			t.Fatalf("%s differs from the attachment", name)
		}
	}
}

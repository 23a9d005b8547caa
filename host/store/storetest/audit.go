package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/store"
)

// testAudit: entries come back as appended, newest first, per tenant only;
// every filter selects what it says; pages cover the log exactly once
// while entries are being appended; an update is refused by the database;
// only the retention's purge deletes.
func testAudit(t *testing.T, open Opener) {
	ctx := context.Background()
	db := migrated(t, open).DB
	t1 := must(db.CreateTenant(ctx, "Acme"))
	t2 := must(db.CreateTenant(ctx, "Other"))
	log := audit.NewLog(db, nil)
	ctxU := audit.WithRequest(audit.WithActor(ctx, audit.Actor{Kind: audit.ActorUser, ID: "u1", Via: audit.ViaToken}),
		audit.Request{IP: "203.0.113.7", UserAgent: "curl/8"})
	rec := func(c context.Context, e audit.Entry) {
		t.Helper()
		if err := log.Record(c, e); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().Add(-time.Second)
	rec(ctxU, audit.Entry{TenantID: t1.ID, Action: audit.TokenCreated, TargetType: "token", TargetID: "tok1",
		Detail: audit.Detail(map[string]string{"name": "ci 100%_done"})})
	rec(ctxU, audit.Entry{TenantID: t1.ID, Action: audit.PluginUpgraded, TargetType: "plugin", TargetID: "notes",
		Detail: audit.Detail(map[string]any{"from": "1.0.0", "to": "2.0.0"})})
	rec(ctx, audit.Entry{TenantID: t1.ID, Action: audit.PluginRemoved, TargetType: "plugin", TargetID: "notes"})
	rec(ctx, audit.Entry{TenantID: t1.ID, Actor: audit.Actor{Kind: audit.ActorSCIM, ID: "scim1"}, Action: audit.SCIMUserCreated,
		TargetType: "user", TargetID: "u9", Detail: audit.Detail(map[string]string{"userName": "Grace@Example.com"})})
	rec(ctxU, audit.Entry{TenantID: t2.ID, Action: audit.TokenCreated, TargetID: "tok2"})

	search := func(q audit.Query) []audit.Entry {
		t.Helper()
		p, err := db.SearchAudit(ctx, q)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		return p.Entries
	}
	actions := func(es []audit.Entry) string {
		var s []string
		for _, e := range es {
			s = append(s, e.Action)
		}
		return strings.Join(s, ",")
	}
	all := search(audit.Query{TenantID: t1.ID})
	if got, want := actions(all), "scim.user_created,plugin.removed,plugin.upgraded,token.created"; got != want {
		t.Fatalf("tenant 1's log %s, want %s", got, want)
	}
	first := all[3]
	if first.ID == "" || first.At.Before(start) || first.Actor != (audit.Actor{Kind: audit.ActorUser, ID: "u1", Via: audit.ViaToken}) ||
		first.IP != "203.0.113.7" || first.UserAgent != "curl/8" || first.TargetType != "token" || first.TargetID != "tok1" {
		t.Fatalf("first entry %+v", first)
	}
	var d map[string]string
	if err := json.Unmarshal(first.Detail, &d); err != nil || d["name"] != "ci 100%_done" {
		t.Fatalf("detail %s: %v", first.Detail, err)
	}
	if all[1].Actor.Kind != audit.ActorSystem || all[1].IP != "" || string(all[1].Detail) != "{}" {
		t.Fatalf("a system entry %+v", all[1])
	}
	for _, c := range []struct {
		q    audit.Query
		want string
	}{
		{audit.Query{Action: audit.TokenCreated}, "token.created"},
		{audit.Query{Action: "plugin.*"}, "plugin.removed,plugin.upgraded"},
		{audit.Query{Action: "plugin."}, "plugin.removed,plugin.upgraded"},
		{audit.Query{Action: "plugin"}, ""},
		{audit.Query{Action: "plug%"}, ""},
		{audit.Query{Actor: "u1"}, "plugin.upgraded,token.created"},
		{audit.Query{Actor: "scim1"}, "scim.user_created"},
		{audit.Query{Target: "notes"}, "plugin.removed,plugin.upgraded"},
		{audit.Query{Text: "grace@EXAMPLE"}, "scim.user_created"},
		{audit.Query{Text: "100%_"}, "token.created"},
		{audit.Query{Text: "0%x"}, ""},
		{audit.Query{Text: "203.0.113"}, "plugin.upgraded,token.created"},
		{audit.Query{Since: time.Now().Add(time.Hour)}, ""},
		{audit.Query{Until: start}, ""},
		{audit.Query{Since: start, Until: time.Now().Add(time.Hour), Action: "scim.*"}, "scim.user_created"},
	} {
		c.q.TenantID = t1.ID
		if got := actions(search(c.q)); got != c.want {
			t.Errorf("search %+v: %s, want %s", c.q, got, c.want)
		}
	}
	if got := actions(search(audit.Query{TenantID: t2.ID})); got != "token.created" {
		t.Fatalf("tenant 2 sees %s", got)
	}
	for _, q := range []audit.Query{{}, {TenantID: t1.ID, Limit: -1}, {TenantID: t1.ID, Limit: audit.MaxPage + 1},
		{TenantID: t1.ID, After: "!!"}, {TenantID: t1.ID, Since: start, Until: start}} {
		if _, err := db.SearchAudit(ctx, q); !errors.Is(err, audit.ErrInvalid) {
			t.Errorf("search %+v: %v, want ErrInvalid", q, err)
		}
	}
	for _, e := range []audit.Entry{{Action: audit.TokenCreated}, {TenantID: t1.ID, Action: "Token Created"},
		{TenantID: t1.ID, Action: audit.TokenCreated, Detail: json.RawMessage(`[1]`)},
		{TenantID: t1.ID, Action: audit.TokenCreated, Actor: audit.Actor{Kind: "root"}}} {
		if err := log.Record(ctx, e); !errors.Is(err, audit.ErrInvalid) {
			t.Errorf("record %+v: %v, want ErrInvalid", e, err)
		}
	}
	if err := log.Record(ctx, audit.Entry{TenantID: "no-such-tenant", Action: audit.TokenCreated}); err == nil {
		t.Error("an entry of an unknown tenant was stored")
	}

	// Paging: 25 entries more, read 7 at a time while more are appended;
	// each entry is seen once and in order.
	for i := range 25 {
		rec(ctx, audit.Entry{TenantID: t1.ID, Action: audit.ToolCalled, TargetID: fmt.Sprint(i)})
	}
	seen := map[string]bool{}
	var prev audit.Entry
	q := audit.Query{TenantID: t1.ID, Action: audit.ToolCalled, Limit: 7}
	pages := 0
	for {
		p, err := db.SearchAudit(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		rec(ctx, audit.Entry{TenantID: t1.ID, Action: audit.ToolCalled, TargetID: "later"})
		for _, e := range p.Entries {
			if seen[e.ID] || (prev.ID != "" && (e.At.After(prev.At) || (e.At.Equal(prev.At) && e.ID > prev.ID))) {
				t.Fatalf("entry %+v out of order or twice after %+v", e, prev)
			}
			seen[e.ID], prev = true, e
		}
		if p.Next == "" {
			break
		}
		q.After = p.Next
	}
	if len(seen) != 25 || pages != 4 {
		t.Fatalf("paging saw %d entries in %d pages, want 25 in 4", len(seen), pages)
	}
	var n int
	if err := audit.Each(ctx, db, audit.Query{TenantID: t1.ID, Limit: 3}, func(audit.Entry) error { n++; return nil }); err != nil || n != 4+25+4 {
		t.Fatalf("Each saw %d entries: %v", n, err)
	}

	// Append-only: the database itself refuses to change an entry.
	if _, err := db.SQL().ExecContext(ctx, rebindForTest(db, `UPDATE audit_log SET action = 'token.revoked' WHERE id = ?`), first.ID); err == nil {
		t.Fatal("an audit entry was updated")
	}
	// Retention deletes only what is older than its cut-off.
	if n, err := audit.Sweep(ctx, db, 0, time.Now()); err != nil || n != 0 {
		t.Fatalf("retention 0 deleted %d: %v", n, err)
	}
	if n, err := audit.Sweep(ctx, db, time.Hour, time.Now()); err != nil || n != 0 {
		t.Fatalf("a retention of an hour deleted %d fresh entries: %v", n, err)
	}
	if n, err := audit.Sweep(ctx, db, time.Nanosecond, time.Now().Add(time.Second)); err != nil || n != 4+25+4+1 {
		t.Fatalf("retention deleted %d entries, want every one: %v", n, err)
	}
}

// rebindForTest writes a one-placeholder query in db's dialect.
func rebindForTest(db interface{ Dialect() store.Dialect }, q string) string {
	if db.Dialect() == store.Postgres {
		return strings.Replace(q, "?", "$1", 1)
	}
	return q
}

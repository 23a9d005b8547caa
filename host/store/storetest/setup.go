package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testSetup: the one-time setup link of a fresh server makes the first
// organisation and admin once, whole or not at all.
func testSetup(t *testing.T, open Opener) {
	ctx := context.Background()
	env := migrated(t, open)
	db := env.DB

	needs := func(want bool) {
		t.Helper()
		got, err := db.NeedsSetup(ctx)
		if err != nil || got != want {
			t.Fatalf("NeedsSetup = %v, %v; want %v", got, err, want)
		}
	}
	needs(true)
	expired, err := db.IssueSetupLink(ctx, -time.Second)
	if err != nil || expired == "" {
		t.Fatalf("issue: %q, %v", expired, err)
	}
	link, err := db.IssueSetupLink(ctx, time.Hour)
	if err != nil || link == "" || link == expired {
		t.Fatalf("issue: %q, %v", link, err)
	}
	refusals := []struct {
		name, secret, email string
		want                error
	}{
		{"expired link", expired, "ada@example.org", tenancy.ErrUnauthenticated},
		{"unknown link", "ahs_" + link[len(link)-43:len(link)-1] + "x", "ada@example.org", tenancy.ErrUnauthenticated},
		{"an API token", "ahk_" + link[4:], "ada@example.org", tenancy.ErrUnauthenticated},
		{"no e-mail address", link, "ada", tenancy.ErrInvalid},
	}
	for _, c := range refusals {
		if _, err := db.CompleteSetup(ctx, c.secret, "Acme", c.email, "Ada", time.Hour); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	needs(true) // nothing half-made by the refusals
	if _, err := db.CompleteSetup(ctx, link, "", "ada@example.org", "Ada", time.Hour); !errors.Is(err, tenancy.ErrInvalid) {
		t.Fatalf("no organisation name: %v", err)
	}
	needs(true) // the transaction took the tenant back, and the link is still good

	run, err := db.CompleteSetup(ctx, link, " Acme ", "ada@example.org", "Ada", time.Hour)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	if run.Tenant.Name != "Acme" || !run.User.Admin || run.User.TenantID != run.Tenant.ID || run.Workspace.TenantID != run.Tenant.ID {
		t.Fatalf("setup made %+v", run)
	}
	p, err := db.Authenticate(ctx, run.Token)
	if err != nil || p.UserID != run.User.ID || !p.Admin || p.TenantID != run.Tenant.ID {
		t.Fatalf("the setup's token: %+v, %v", p, err)
	}
	ws, err := db.Workspaces(ctx, p)
	if err != nil || len(ws) != 1 || ws[0].ID != run.Workspace.ID {
		t.Fatalf("the admin's workspaces: %+v, %v", ws, err)
	}
	needs(false)
	if _, err := db.CompleteSetup(ctx, link, "Acme 2", "eve@example.org", "Eve", time.Hour); !errors.Is(err, tenancy.ErrConflict) {
		t.Fatalf("a used link: %v", err)
	}
	if again, err := db.IssueSetupLink(ctx, time.Hour); err != nil || again != "" {
		t.Fatalf("a set-up server issued a link: %q, %v", again, err)
	}

	t.Run("two links at once make one organisation", func(t *testing.T) {
		env := migrated(t, open)
		second := env.Peer
		if second == nil {
			second = env.DB
		}
		links := make([]string, 2)
		for i := range links {
			if links[i], err = env.DB.IssueSetupLink(ctx, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, db := range []*store.DB{env.DB, second} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = db.CompleteSetup(ctx, links[i], "Org", "admin@example.org", "", time.Hour)
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("want exactly one setup to succeed: %v / %v", errs[0], errs[1])
		}
		for _, err := range errs {
			if err != nil && !errors.Is(err, tenancy.ErrConflict) && !errors.Is(err, tenancy.ErrUnauthenticated) {
				t.Fatalf("the losing setup: %v", err)
			}
		}
	})
}

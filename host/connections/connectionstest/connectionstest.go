// Package connectionstest holds what the tests of connectors share: a
// store with two users of one tenant, a sealer, a resolver for test host
// names, a log sink, a recording indexer, a settable clock, and the world
// of an agent using the connection tools.
//
// It imports store, files, worldtest, agent and knowledge, so only
// external tests (package x_test) of connections and of packages above it,
// such as filetransfer and datasources, can use it; connections itself
// never does.
package connectionstest

import (
	"bytes"
	"context"
	"testing"

	"github.com/agenthost/agenthost/host/secrets"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/worldtest"
)

// Users is a migrated embedded store with one tenant, "Acme", and two of
// its users, alice and bob, neither an administrator nor a member of any
// workspace: the owner of a connection and the other user who must not
// reach it.
type Users struct {
	DB         *store.DB
	Tenant     tenancy.Tenant
	Alice, Bob tenancy.Principal
}

// NewUsers makes Users in a temporary directory of tb; the store is closed
// when the test ends. Any failure ends the test.
func NewUsers(tb testing.TB) Users {
	tb.Helper()
	ctx := context.Background()
	db, _ := worldtest.Store(tb)
	tn, err := db.CreateTenant(ctx, "Acme")
	if err != nil {
		tb.Fatal(err)
	}
	user := func(email string) tenancy.Principal {
		u, err := db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: email, Name: email})
		if err != nil {
			tb.Fatal(err)
		}
		return tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	}
	return Users{DB: db, Tenant: tn, Alice: user("alice@acme"), Bob: user("bob@acme")}
}

// Sealer returns a sealer with a fixed key, for connections services of
// tests (never a key of a deployment).
func Sealer(tb testing.TB) *secrets.Sealer {
	tb.Helper()
	s, err := secrets.NewSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/tenancy"
)

// testPreferences: a person's own settings start at their defaults, are
// kept whole and replaced whole, are the person's alone (another person,
// the tenant's admin included, reads only their own), and malformed ones
// are refused without touching what is kept.
func testPreferences(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB

	if got, err := db.UserPreferences(ctx, w.alice); err != nil || got != (tenancy.Preferences{Theme: tenancy.ThemeSystem}) {
		t.Fatalf("none saved: %+v %v, want the defaults", got, err)
	}
	want := tenancy.Preferences{Language: "de", Theme: tenancy.ThemeDark, CustomInstructions: "Antworte knapp. Zitiere immer.", DefaultModel: "local/llama3"}
	if got, err := db.SetUserPreferences(ctx, w.alice, want); err != nil || got != want {
		t.Fatalf("set: %+v %v", got, err)
	}
	if got, err := db.UserPreferences(ctx, w.alice); err != nil || got != want {
		t.Errorf("read back: %+v %v, want %+v", got, err, want)
	}
	for _, p := range []tenancy.Principal{w.bob, w.admin, w.dave} {
		if got, err := db.UserPreferences(ctx, p); err != nil || got != (tenancy.Preferences{Theme: tenancy.ThemeSystem}) {
			t.Errorf("%s sees %+v %v, want their own defaults", p.UserID, got, err)
		}
	}
	// Alice's user under another tenant's name is no one.
	stray := tenancy.Principal{TenantID: w.dave.TenantID, UserID: w.alice.UserID}
	if got, err := db.UserPreferences(ctx, stray); err != nil || got.CustomInstructions != "" {
		t.Errorf("alice's id in another tenant reads %+v %v", got, err)
	}
	if _, err := db.SetUserPreferences(ctx, stray, want); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("alice's id in another tenant sets: %v, want ErrNotFound", err)
	}

	for _, c := range []struct {
		name string
		p    tenancy.Preferences
	}{
		{"an unknown theme", tenancy.Preferences{Theme: "sepia"}},
		{"a language that is no tag", tenancy.Preferences{Language: "deutsch!"}},
		{"instructions past the bound", tenancy.Preferences{CustomInstructions: strings.Repeat("x", tenancy.MaxCustomInstructions+1)}},
		{"instructions not UTF-8", tenancy.Preferences{CustomInstructions: "caf\xe9"}},
		{"a bare model name", tenancy.Preferences{DefaultModel: "gpt-4o"}},
		{"a model list", tenancy.Preferences{DefaultModel: "openai/a,openai/b"}},
	} {
		if _, err := db.SetUserPreferences(ctx, w.alice, c.p); !errors.Is(err, tenancy.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	if got, _ := db.UserPreferences(ctx, w.alice); got != want {
		t.Errorf("after refused updates: %+v, want %+v", got, want)
	}

	// Replaced whole; an empty theme is the system's; the bound is inclusive.
	long := strings.Repeat("é", tenancy.MaxCustomInstructions/2)
	if got, err := db.SetUserPreferences(ctx, w.alice, tenancy.Preferences{CustomInstructions: "  " + long + "\n"}); err != nil ||
		got != (tenancy.Preferences{Theme: tenancy.ThemeSystem, CustomInstructions: long}) {
		t.Fatalf("replace: %+v %v", got.Theme, err)
	}
	if got, _ := db.UserPreferences(ctx, w.alice); got.CustomInstructions != long || got.Language != "" || got.DefaultModel != "" {
		t.Errorf("replaced: language %q model %q, %d bytes of instructions", got.Language, got.DefaultModel, len(got.CustomInstructions))
	}
}

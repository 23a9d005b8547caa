package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/tenancy"
)

// testNotifications: a person's notifications are theirs alone, newest
// first with the unread count; one subject is recorded once (two hosts
// recording the same end); a workspace the person left hides its
// notifications; marking read touches only the person's own; a person of
// another tenant cannot be notified under this one's name.
func testNotifications(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	note := func(p tenancy.Principal, ws, subject string) notifications.Notification {
		return notifications.Notification{TenantID: p.TenantID, UserID: p.UserID, WorkspaceID: ws, Kind: notifications.BackgroundJob,
			SubjectID: subject, Status: "completed", Name: "Summarise the reports", Detail: "3 files read", WorkflowID: "wf-1"}
	}
	add := func(n notifications.Notification, want bool) {
		t.Helper()
		if added, err := db.AddNotification(ctx, n); err != nil || added != want {
			t.Fatalf("add %s for %s: %v %v, want added %v", n.SubjectID, n.UserID, added, err, want)
		}
	}
	if pg, err := db.Notifications(ctx, w.alice, 10); err != nil || len(pg.Items) != 0 || pg.Unread != 0 {
		t.Fatalf("none yet: %+v %v", pg, err)
	}
	add(note(w.alice, w.wsA.ID, "job-1"), true)
	add(note(w.alice, w.wsA.ID, "job-1"), false) // the same end, told again
	add(note(w.alice, w.wsA.ID, "job-2"), true)
	add(note(w.alice, "", "job-3"), true)
	appr := note(w.alice, w.wsA.ID, "job-1")
	appr.Kind = notifications.Approval // another kind of the same subject id is another subject
	add(appr, true)
	add(note(w.bob, w.wsA.ID, "job-1"), true)
	// carol's workspace B is not alice's: recorded, never shown.
	add(note(w.alice, w.wsB.ID, "job-4"), true)

	pg, err := db.Notifications(ctx, w.alice, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Items) != 4 || pg.Unread != 4 {
		t.Fatalf("alice: %d items, %d unread, want 4 and 4: %+v", len(pg.Items), pg.Unread, pg.Items)
	}
	if pg.Items[0].Kind != notifications.Approval || pg.Items[3].SubjectID != "job-1" {
		t.Errorf("not newest first: %+v", pg.Items)
	}
	got := pg.Items[3]
	if got.Name != "Summarise the reports" || got.Detail != "3 files read" || got.Status != "completed" || got.WorkflowID != "wf-1" ||
		got.WorkspaceID != w.wsA.ID || got.ReadAt != nil || got.CreatedAt.IsZero() || got.ID == "" {
		t.Errorf("kept as %+v", got)
	}
	for _, it := range pg.Items {
		if it.SubjectID == "job-4" {
			t.Errorf("a notification of a workspace alice is not in is shown: %+v", it)
		}
	}
	if pg, _ := db.Notifications(ctx, w.alice, 2); len(pg.Items) != 2 || pg.Unread != 4 {
		t.Errorf("limit 2: %d items, %d unread", len(pg.Items), pg.Unread)
	}
	for _, p := range []tenancy.Principal{w.admin, w.carol, w.dave} {
		if pg, err := db.Notifications(ctx, p, 10); err != nil || len(pg.Items) != 0 || pg.Unread != 0 {
			t.Errorf("%s sees %+v %v", p.UserID, pg, err)
		}
	}
	// Alice's id under the other tenant is no one.
	stray := tenancy.Principal{TenantID: w.dave.TenantID, UserID: w.alice.UserID}
	if _, err := db.AddNotification(ctx, note(stray, "", "job-9")); !errors.Is(err, tenancy.ErrNotFound) {
		t.Errorf("alice's id in another tenant notified: %v, want ErrNotFound", err)
	}
	if pg, _ := db.Notifications(ctx, stray, 10); len(pg.Items) != 0 {
		t.Errorf("alice's id in another tenant reads %+v", pg)
	}

	// Bob's id marks nothing of alice's; alice marks one, then all.
	if n, err := db.MarkNotificationsRead(ctx, w.bob, []string{got.ID}); err != nil || n != 0 {
		t.Errorf("bob marks alice's: %d %v", n, err)
	}
	if n, err := db.MarkNotificationsRead(ctx, w.alice, []string{got.ID, "no-such-id"}); err != nil || n != 1 {
		t.Errorf("alice marks one: %d %v", n, err)
	}
	pg, _ = db.Notifications(ctx, w.alice, 10)
	if pg.Unread != 3 || pg.Items[3].ReadAt == nil || pg.Items[0].ReadAt != nil {
		t.Errorf("after one read: %d unread, %+v", pg.Unread, pg.Items)
	}
	if n, err := db.MarkNotificationsRead(ctx, w.alice, nil); err != nil || n != 4 { // job-4 of workspace B too
		t.Errorf("alice marks all: %d %v, want 4", n, err)
	}
	if pg, _ := db.Notifications(ctx, w.alice, 10); pg.Unread != 0 {
		t.Errorf("after all read: %d unread", pg.Unread)
	}
	if pg, _ := db.Notifications(ctx, w.bob, 10); pg.Unread != 1 {
		t.Errorf("bob's unread after alice read hers: %d, want 1", pg.Unread)
	}
}

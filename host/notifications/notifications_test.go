package notifications_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/worldtest"
)

// TestNotify: a notification is recorded once per subject and wakes its
// person's watchers (coalesced, never blocking), not another person's;
// malformed ones are not recorded; long texts are cut at a character
// boundary; marking read wakes the watchers too.
func TestNotify(t *testing.T) {
	ctx := context.Background()
	w := worldtest.New(t, worldtest.Options{})
	svc := notifications.New(w.DB, nil)
	mine, stopMine := svc.Watch(w.P.UserID)
	defer stopMine()
	theirs, stopTheirs := svc.Watch("someone-else")
	defer stopTheirs()
	woken := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}
	n := notifications.Notification{TenantID: w.P.TenantID, UserID: w.P.UserID, WorkspaceID: w.Workspace, Kind: notifications.Sync,
		SubjectID: "ds-1#1", Status: "completed", Name: "  " + strings.Repeat("ä", 150) + "  ", Detail: strings.Repeat("x", 600)}
	svc.Notify(ctx, n)
	if !woken(mine) || woken(theirs) {
		t.Fatal("the person's watcher was not woken, or another's was")
	}
	svc.Notify(ctx, n) // the same sync's end, told again
	if woken(mine) {
		t.Error("a subject told twice woke the watcher again")
	}
	for _, bad := range []notifications.Notification{
		{TenantID: w.P.TenantID, UserID: w.P.UserID, Kind: "weather", SubjectID: "x"},
		{TenantID: w.P.TenantID, UserID: w.P.UserID, Kind: notifications.Approval},
		{UserID: w.P.UserID, Kind: notifications.Approval, SubjectID: "x"},
		{TenantID: w.P.TenantID, UserID: "nobody", Kind: notifications.Approval, SubjectID: "x"},
	} {
		svc.Notify(ctx, bad)
	}
	pg, err := svc.List(ctx, w.P, 0)
	if err != nil || len(pg.Items) != 1 || pg.Unread != 1 {
		t.Fatalf("list %+v %v, want the one notification", pg, err)
	}
	got := pg.Items[0]
	if len(got.Name) > notifications.MaxName || !utf8.ValidString(got.Name) || !strings.HasSuffix(got.Name, "…") || strings.HasPrefix(got.Name, " ") {
		t.Errorf("name kept as %q (%d bytes)", got.Name, len(got.Name))
	}
	if len(got.Detail) > notifications.MaxDetail || !strings.HasSuffix(got.Detail, "…") {
		t.Errorf("detail kept with %d bytes", len(got.Detail))
	}
	if k, err := svc.MarkRead(ctx, w.P, nil); err != nil || k != 1 || !woken(mine) {
		t.Errorf("mark read: %d %v, or no wake-up", k, err)
	}
	if _, err := svc.MarkRead(ctx, w.P, make([]string, notifications.MaxLimit+1)); err == nil {
		t.Error("more ids than a page holds were accepted")
	}
	stopMine()
	svc.Notify(ctx, notifications.Notification{TenantID: w.P.TenantID, UserID: w.P.UserID, Kind: notifications.Approval, SubjectID: "a-1", Name: "sendMail"})
	if pg, _ := svc.List(ctx, w.P, 0); pg.Unread != 1 {
		t.Errorf("after the watch ended, a notification is still recorded: %d unread", pg.Unread)
	}
}

package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Notifications is what the API needs of a person's notifications
// (notifications.Service).
type Notifications interface {
	List(ctx context.Context, p tenancy.Principal, limit int) (notifications.Page, error)
	MarkRead(ctx context.Context, p tenancy.Principal, ids []string) (int, error)
	Watch(userID string) (<-chan struct{}, func())
}

// notificationsReread is how often a notification stream reads the
// person's notifications again: those recorded by another host sharing the
// database arrive at most this late (this host's wake the stream at once).
const notificationsReread = 5 * time.Second

// handleNotifications: GET /me/notifications, the caller's newest
// notifications and how many are unread.
func handleNotifications(n Notifications) fiber.Handler {
	return func(c *fiber.Ctx) error {
		limit, err := queryLimit(c, notifications.MaxLimit)
		if err != nil {
			return err
		}
		pg, err := n.List(c.UserContext(), principal(c), limit)
		if err != nil {
			return err
		}
		return c.JSON(pg)
	}
}

// handleMarkNotificationsRead: POST /me/notifications/read {"ids"}, the
// listed notifications (all, without ids) read; answers the new page.
func handleMarkNotificationsRead(n Notifications) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var body struct {
			IDs []string `json:"ids"`
		}
		if err := decodeJSON(c, &body); err != nil {
			return err
		}
		p := principal(c)
		if _, err := n.MarkRead(c.UserContext(), p, body.IDs); err != nil {
			return err
		}
		pg, err := n.List(c.UserContext(), p, 0)
		if err != nil {
			return err
		}
		return c.JSON(pg)
	}
}

// handleNotificationEvents: GET /me/notifications/events, the caller's
// notifications as Server-Sent Events: a `notifications` event with the
// page (as GET /me/notifications answers it) when the stream opens and
// whenever it changes (one recorded or marked read). Each event holds the
// whole page, so a reconnect needs no Last-Event-ID and misses nothing.
// The connection is taken over as the workflows' streams are (handleEvents).
func handleNotificationEvents(n Notifications, streams *eventStreams) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := principal(c)
		again := requestRecheck(c)
		first, err := n.List(c.UserContext(), p, 0)
		if err != nil {
			return err
		}
		chunked := streamHeaders(c)
		wake, stop := n.Watch(p.UserID)
		takeOver(c, streams, stop, func(conn net.Conn, header []byte) {
			streamNotifications(streams.ctx, conn, n, p, wake, again, header, chunked, first)
			stop()
		})
		return nil
	}
}

// streamNotifications writes the page, then each changed page, until the
// client goes away, its credential no longer admits it or ctx ends.
func streamNotifications(ctx context.Context, conn net.Conn, n Notifications, p tenancy.Principal, wake <-chan struct{},
	again recheck, header []byte, chunked bool, first notifications.Page) {
	defer conn.Close()
	w := sseWriter{conn: conn, chunked: chunked}
	sent := ""
	send := func(pg notifications.Page, prefix []byte) bool {
		b, err := json.Marshal(pg)
		if err != nil {
			return false
		}
		if string(b) == sent {
			return true
		}
		sent = string(b)
		return w.write(prefix, fmt.Appendf(nil, "event: notifications\ndata: %s\n\n", b))
	}
	if !send(first, header) {
		return
	}
	reread := time.NewTicker(notificationsReread)
	defer reread.Stop()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			w.end()
			return
		case <-beat.C:
			if revoked(ctx, again) {
				w.end()
				return
			}
			if !w.write(nil, []byte(": ping\n\n")) {
				return
			}
			continue
		case <-wake:
		case <-reread.C:
			if revoked(ctx, again) {
				w.end()
				return
			}
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		pg, err := n.List(rctx, p, 0)
		cancel()
		if err != nil {
			// The database is away: the next read tries again.
			continue
		}
		if !send(pg, nil) {
			return
		}
	}
}

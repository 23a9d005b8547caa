package api

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
)

// RateCounter counts a tenant's requests per window in storage every host
// shares (store.DB).
type RateCounter interface {
	CountRequest(ctx context.Context, tenantID string, window time.Time) (int64, error)
}

// RateLimit bounds the requests that start work (workflows, background
// jobs, tool calls, uploads) each tenant may make per minute, over all
// hosts together; PerMinute 0 is no limit.
type RateLimit struct {
	Counter   RateCounter
	PerMinute int64
}

// rateLimited answers 429 with Retry-After once the caller's tenant has
// used its requests of the current minute.
func rateLimited(l RateLimit) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if l.Counter == nil || l.PerMinute <= 0 {
			return c.Next()
		}
		now := time.Now().UTC()
		window := now.Truncate(time.Minute)
		n, err := l.Counter.CountRequest(c.UserContext(), principal(c).TenantID, window)
		if err != nil {
			return err
		}
		if n > l.PerMinute {
			retry := int(window.Add(time.Minute).Sub(now).Seconds()) + 1
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(retry))
			return problem(c, fiber.StatusTooManyRequests, "Too Many Requests",
				fmt.Sprintf("the tenant has made its %d requests that start work this minute (over all hosts); retry in %d s", l.PerMinute, retry))
		}
		return c.Next()
	}
}

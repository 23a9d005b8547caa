package oauthserver

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"
)

// limiter keeps a token bucket per endpoint and client address (a
// minute's worth at once, then the rate). It lives
// in the process: each host bounds what reaches it, which is what keeps a
// registration flood or a code-guessing run from the store.
type limiter struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// maxBuckets bounds the table; when full it starts over (every address
// gets a fresh bucket, which only ever lets more through for a moment).
const maxBuckets = 50_000

func newLimiter() *limiter { return &limiter{buckets: map[string]*rate.Limiter{}} }

func (l *limiter) allow(key string, perMinute int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.buckets = map[string]*rate.Limiter{}
		}
		b = rate.NewLimiter(rate.Every(time.Minute/time.Duration(perMinute)), perMinute)
		l.buckets[key] = b
	}
	return b.Allow()
}

// limit answers 429 to an address over perMinute requests to the endpoint.
func (s *Server) limit(endpoint string, perMinute int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !s.limits.allow(endpoint+" "+c.IP(), perMinute) {
			c.Set("Retry-After", strconv.Itoa(max(60/perMinute, 1)))
			return oauthError(c, fiber.StatusTooManyRequests, "temporarily_unavailable", "too many requests from this address; try again later")
		}
		return c.Next()
	}
}

// cors serves browser-based clients of the listed origins: a preflight
// is answered here, other requests get the origin named. Nothing here
// reads a cookie, so credentials stay off.
func (s *Server) cors(methods string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		origin := c.Get(fiber.HeaderOrigin)
		listed := origin != "" && s.origins[strings.ToLower(origin)]
		if listed {
			c.Vary(fiber.HeaderOrigin)
			c.Set(fiber.HeaderAccessControlAllowOrigin, origin)
		}
		if c.Method() != fiber.MethodOptions {
			return c.Next()
		}
		if listed && c.Get(fiber.HeaderAccessControlRequestMethod) != "" {
			c.Set(fiber.HeaderAccessControlAllowMethods, methods)
			c.Set(fiber.HeaderAccessControlAllowHeaders, "Content-Type, Authorization, Mcp-Protocol-Version")
			c.Set(fiber.HeaderAccessControlMaxAge, "600")
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

package api

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
)

// withRequestMeta puts where a request came from into its context, for the
// audit entries recorded while it runs (audit.Request).
func withRequestMeta(c *fiber.Ctx) {
	c.SetUserContext(audit.WithRequest(c.UserContext(), audit.Request{IP: c.IP(), UserAgent: c.Get(fiber.HeaderUserAgent)}))
}

// withActor puts the authenticated principal into the request's context as
// the actor of its audit entries; bearer says a token authenticated.
func withActor(c *fiber.Ctx, p tenancy.Principal, bearer bool) {
	via := audit.ViaSession
	if bearer {
		via = audit.ViaToken
	}
	c.SetUserContext(audit.WithActor(c.UserContext(), audit.Actor{Kind: audit.ActorUser, ID: p.UserID, Via: via}))
}

// recordChange appends an entry of the principal's tenant. The change is made by
// then: a failure is logged by the recorder, the response stands.
func recordChange(c *fiber.Ctx, r audit.Recorder, e audit.Entry) {
	if e.TenantID == "" {
		e.TenantID = principal(c).TenantID
	}
	_ = audit.Record(c.UserContext(), r, e)
}

// auditQuery reads a search from the query string.
func auditQuery(c *fiber.Ctx) (audit.Query, error) {
	p := principal(c)
	if !p.Admin {
		return audit.Query{}, fmt.Errorf("%w: only the tenant's admin reads the audit log", tenancy.ErrForbidden)
	}
	q := audit.Query{TenantID: p.TenantID, Action: c.Query("action"), Actor: c.Query("actor"), Target: c.Query("target"),
		Text: c.Query("q"), After: c.Query("after")}
	for _, t := range []struct {
		name string
		to   *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		if v := c.Query(t.name); v != "" {
			at, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return q, fmt.Errorf("%w: %s must be an RFC 3339 time: %v", tenancy.ErrInvalid, t.name, err)
			}
			*t.to = at
		}
	}
	if v := c.Query("limit"); v != "" {
		n := c.QueryInt("limit", -1)
		if n < 1 || n > audit.MaxPage {
			return q, fmt.Errorf("%w: limit must be 1..%d", tenancy.ErrInvalid, audit.MaxPage)
		}
		q.Limit = n
	}
	return q.Check()
}

func handleAuditSearch(s audit.Searcher) fiber.Handler {
	return func(c *fiber.Ctx) error {
		q, err := auditQuery(c)
		if err != nil {
			return err
		}
		page, err := s.SearchAudit(c.UserContext(), q)
		if err != nil {
			return err
		}
		return c.JSON(page)
	}
}

// csvHeader is the export's CSV columns.
var csvHeader = []string{"id", "at", "actorKind", "actorId", "actorVia", "ip", "userAgent", "action", "targetType", "targetId", "workspaceId", "detail"}

// handleAuditExport streams every entry a search selects as JSON lines
// (format=jsonl, the default) or CSV (format=csv), newest first, a page
// at a time: the export is never held whole. An error midway ends the
// stream early (the status line is sent by then); the last line of a
// complete JSON lines export is not an entry but {"complete":true,...}
// so a reader can tell a complete export from a cut one.
func handleAuditExport(s audit.Searcher, logger *slog.Logger) fiber.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(c *fiber.Ctx) error {
		q, err := auditQuery(c)
		if err != nil {
			return err
		}
		format := c.Query("format", "jsonl")
		if format != "jsonl" && format != "csv" {
			return fmt.Errorf("%w: format must be jsonl or csv", tenancy.ErrInvalid)
		}
		// The first page is read before the status is sent, so that a
		// failing database is a proper error response.
		first, err := s.SearchAudit(c.UserContext(), q)
		if err != nil {
			return err
		}
		ctx := context.WithoutCancel(c.UserContext())
		name := "audit-" + time.Now().UTC().Format("20060102T150405Z")
		if format == "csv" {
			c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
			c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`.csv"`)
		} else {
			c.Set(fiber.HeaderContentType, "application/x-ndjson")
			c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`.jsonl"`)
		}
		c.Set("X-Accel-Buffering", "no")
		c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
			var cw *csv.Writer
			if format == "csv" {
				cw = csv.NewWriter(w)
				_ = cw.Write(csvHeader)
			}
			enc := json.NewEncoder(w)
			n := 0
			write := func(e audit.Entry) error {
				n++
				if cw != nil {
					return cw.Write(csvRow(e))
				}
				return enc.Encode(e)
			}
			page := first
			for {
				for _, e := range page.Entries {
					if err := write(e); err != nil {
						return // the client went away
					}
				}
				if cw != nil {
					cw.Flush()
				}
				if err := w.Flush(); err != nil {
					return
				}
				if page.Next == "" {
					break
				}
				q.After = page.Next
				if page, err = s.SearchAudit(ctx, q); err != nil {
					logger.Error("audit export cut short", "tenant", q.TenantID, "entries", n, "err", err)
					return
				}
			}
			if cw == nil {
				_ = enc.Encode(map[string]any{"complete": true, "entries": n})
			}
			_ = w.Flush()
		})
		return nil
	}
}

// csvRow is one entry as CSV cells. A cell a spreadsheet would run as a
// formula (=, +, -, @ first) is quoted with a leading apostrophe: entries
// carry text that users and identity providers chose.
func csvRow(e audit.Entry) []string {
	row := []string{e.ID, e.At.Format(time.RFC3339Nano), string(e.Actor.Kind), e.Actor.ID, e.Actor.Via, e.IP, e.UserAgent,
		e.Action, e.TargetType, e.TargetID, e.WorkspaceID, string(e.Detail)}
	for i, v := range row {
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			row[i] = "'" + v
		}
	}
	return row
}

// recordSignOut records a sign-out that next (the UI's) completed.
func recordSignOut(next fiber.Handler, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := next(c); err != nil {
			return err
		}
		p := principal(c)
		recordChange(c, rec, audit.Entry{Action: audit.SignedOut, TargetType: "user", TargetID: p.UserID})
		return nil
	}
}

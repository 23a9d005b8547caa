// Package scim serves SCIM 2.0 provisioning (RFC 7643, RFC 7644) at
// /scim/v2, as Microsoft Entra ID and Okta push users and groups: create,
// read, list with a filter (userName eq "x", externalId eq "y"), replace,
// PATCH (both providers' shapes: Entra's capitalised ops and string
// booleans, Okta's path-less value objects), deactivate, delete, and group
// membership. A tenant admin makes the tenant's SCIM token (`agenthost
// admin scim-token`); every request acts in that tenant only, and every
// change goes to its audit log (host/audit) with the token as the actor.
//
// The model (docs/scim.md): a SCIM user is an agenthost user of the
// tenant, its userName linked case-insensitively, its e-mail the primary
// address the provider sends (else the userName); active=false deactivates
// the user at once (sessions end, API tokens stop). DELETE deactivates and
// unlinks: the person's data stays until an admin removes it. Groups give
// workspace roles through the tenant's mappings (group name → workspace
// role, or tenant admin); provisioning takes back only what it granted.
//
// The protocol is small enough that it is implemented here rather than
// through a library: what we need of it is the users and groups endpoints,
// equality filters and the PATCH shapes the two providers send, and each
// of those is tested with the providers' documented requests.
package scim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Schema URNs (RFC 7643 §8.7, RFC 7644 §3).
const (
	UserSchema     = "urn:ietf:params:scim:schemas:core:2.0:User"
	GroupSchema    = "urn:ietf:params:scim:schemas:core:2.0:Group"
	EnterpriseUser = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	listSchema     = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	patchSchema    = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	errorSchema    = "urn:ietf:params:scim:api:messages:2.0:Error"
	contentType    = "application/scim+json"
)

// Limits of a request.
const (
	MaxBody  = 1 << 20
	MaxCount = 200
)

// Server serves /scim/v2.
type Server struct {
	store  Store
	audit  audit.Recorder
	logger *slog.Logger
	// base is the path the routes are under.
	base string
}

// New returns the SCIM server over s; rec (nil: none) records every change.
func New(s Store, rec audit.Recorder, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Server{store: s, audit: rec, logger: logger, base: "/scim/v2"}
}

// Error is a SCIM error (RFC 7644 §3.12).
type Error struct {
	Status   int
	SCIMType string
	Detail   string
}

func (e *Error) Error() string { return e.Detail }

func badRequest(scimType, format string, args ...any) *Error {
	return &Error{Status: fiber.StatusBadRequest, SCIMType: scimType, Detail: fmt.Sprintf(format, args...)}
}

// request is what a handler knows of the request.
type request struct {
	ctx    context.Context
	tenant string
	token  string
}

// Handler is the Fiber handler of every /scim/v2 route.
func (s *Server) Handler() fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := s.serve(c)
		if err == nil {
			return nil
		}
		var se *Error
		if !errors.As(err, &se) {
			se = fromDomain(err)
			if se.Status >= 500 {
				s.logger.Error("scim request failed", "method", c.Method(), "path", c.Path(), "err", err)
				se.Detail = "internal error"
			}
		}
		body := map[string]any{"schemas": []string{errorSchema}, "status": strconv.Itoa(se.Status), "detail": se.Detail}
		if se.SCIMType != "" {
			body["scimType"] = se.SCIMType
		}
		if se.Status == fiber.StatusUnauthorized {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="agenthost-scim"`)
		}
		return writeJSON(c, se.Status, body)
	}
}

func fromDomain(err error) *Error {
	switch {
	case errors.Is(err, tenancy.ErrUnauthenticated):
		return &Error{Status: fiber.StatusUnauthorized, Detail: err.Error()}
	case errors.Is(err, tenancy.ErrForbidden):
		return &Error{Status: fiber.StatusForbidden, Detail: err.Error()}
	case errors.Is(err, tenancy.ErrNotFound):
		return &Error{Status: fiber.StatusNotFound, Detail: err.Error()}
	case errors.Is(err, tenancy.ErrConflict):
		return &Error{Status: fiber.StatusConflict, SCIMType: "uniqueness", Detail: err.Error()}
	case errors.Is(err, tenancy.ErrInvalid):
		return &Error{Status: fiber.StatusBadRequest, SCIMType: "invalidValue", Detail: err.Error()}
	}
	return &Error{Status: fiber.StatusInternalServerError, Detail: err.Error()}
}

func writeJSON(c *fiber.Ctx, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, contentType)
	return c.Status(status).Send(b)
}

func (s *Server) serve(c *fiber.Ctx) error {
	secret, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	if !ok {
		return &Error{Status: fiber.StatusUnauthorized, Detail: "send Authorization: Bearer <the tenant's SCIM token>"}
	}
	tenant, token, err := s.store.SCIMToken(c.UserContext(), strings.TrimSpace(secret))
	if err != nil {
		return err
	}
	r := request{ctx: audit.WithActor(c.UserContext(), audit.Actor{Kind: audit.ActorSCIM, ID: token}), tenant: tenant, token: token}
	// The declared length first: the body is not read when it says too much.
	if n := c.Request().Header.ContentLength(); n > MaxBody || len(c.Body()) > MaxBody {
		return &Error{Status: fiber.StatusRequestEntityTooLarge, Detail: fmt.Sprintf("the body is over %d bytes", MaxBody)}
	}
	rest := strings.Trim(strings.TrimPrefix(c.Path(), s.base), "/")
	parts := strings.Split(rest, "/")
	if len(parts) > 2 {
		return &Error{Status: fiber.StatusNotFound, Detail: "no such SCIM endpoint"}
	}
	id := ""
	if len(parts) == 2 {
		id = parts[1]
	}
	switch m := c.Method(); {
	case parts[0] == "ServiceProviderConfig" && id == "" && m == fiber.MethodGet:
		return writeJSON(c, 200, serviceProviderConfig(s.location(c, "ServiceProviderConfig")))
	case parts[0] == "ResourceTypes" && m == fiber.MethodGet:
		return s.resourceTypes(c, id)
	case parts[0] == "Schemas" && m == fiber.MethodGet:
		return s.schemas(c, id)
	case parts[0] == "Users":
		return s.users(c, r, m, id)
	case parts[0] == "Groups":
		return s.groups(c, r, m, id)
	}
	return &Error{Status: fiber.StatusNotFound, Detail: "no such SCIM endpoint"}
}

// location is the URL of a resource path.
func (s *Server) location(c *fiber.Ctx, path string) string {
	return c.BaseURL() + s.base + "/" + path
}

func decode(c *fiber.Ctx, v any) error {
	if len(c.Body()) == 0 {
		return badRequest("invalidSyntax", "the request has no body")
	}
	if err := json.Unmarshal(c.Body(), v); err != nil {
		return badRequest("invalidSyntax", "the body is not the JSON expected: %v", err)
	}
	return nil
}

// paging reads startIndex (1-based) and count.
func paging(c *fiber.Ctx) (start, count int, err error) {
	start, count = 1, 100
	if v := c.Query("startIndex"); v != "" {
		if start, err = strconv.Atoi(v); err != nil {
			return 0, 0, badRequest("invalidValue", "startIndex %q is not a number", v)
		}
		start = max(start, 1) // RFC 7644 §3.4.2.4: less than 1 is 1
	}
	if v := c.Query("count"); v != "" {
		if count, err = strconv.Atoi(v); err != nil {
			return 0, 0, badRequest("invalidValue", "count %q is not a number", v)
		}
		count = min(max(count, 0), MaxCount)
	}
	return start, count, nil
}

func listResponse(total, start int, resources []any) map[string]any {
	if resources == nil {
		resources = []any{}
	}
	return map[string]any{"schemas": []string{listSchema}, "totalResults": total, "startIndex": start,
		"itemsPerPage": len(resources), "Resources": resources}
}

func meta(kind, location string, created, modified time.Time) map[string]any {
	return map[string]any{"resourceType": kind, "created": created.UTC().Format(time.RFC3339), "lastModified": modified.UTC().Format(time.RFC3339),
		"location": location}
}

// record appends an entry of the request's tenant.
func (s *Server) record(r request, action, targetType, target string, detail any) {
	_ = audit.Record(r.ctx, s.audit, audit.Entry{TenantID: r.tenant, Action: action, TargetType: targetType, TargetID: target,
		Detail: audit.Detail(detail)})
}

// parseBool reads a SCIM boolean as the providers send it: true/false,
// or Entra's "True"/"False" strings in PATCH.
func parseBool(v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(b) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, badRequest("invalidValue", "active must be a boolean, not %v", v)
}

func asString(attr string, v any) (string, error) {
	switch s := v.(type) {
	case string:
		if len(s) > 1024 {
			return "", badRequest("invalidValue", "%s is over 1024 bytes", attr)
		}
		return s, nil
	case nil:
		return "", nil
	}
	return "", badRequest("invalidValue", "%s must be a string, not %T", attr, v)
}

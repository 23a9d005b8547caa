package scim

import (
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
)

type groupBody struct {
	DisplayName string `json:"displayName"`
	ExternalID  string `json:"externalId"`
	Members     []struct {
		Value string `json:"value"`
	} `json:"members"`
}

func (s *Server) groupJSON(c *fiber.Ctx, g Group, withMembers bool) map[string]any {
	out := map[string]any{"schemas": []string{GroupSchema}, "id": g.ID, "displayName": g.DisplayName,
		"meta": meta("Group", s.location(c, "Groups/"+g.ID), g.Created, g.Modified)}
	if g.ExternalID != "" {
		out["externalId"] = g.ExternalID
	}
	if withMembers {
		ms := make([]map[string]string, 0, len(g.Members))
		for _, m := range g.Members {
			ms = append(ms, map[string]string{"value": m.Value, "display": m.Display, "$ref": s.location(c, "Users/"+m.Value)})
		}
		out["members"] = ms
	}
	return out
}

// withMembers: excludedAttributes=members (Entra asks so) leaves them out.
func withMembers(c *fiber.Ctx) bool {
	for _, a := range strings.Split(c.Query("excludedAttributes"), ",") {
		if strings.EqualFold(strings.TrimSpace(a), "members") {
			return false
		}
	}
	return true
}

func refIDs(g Group) []string {
	out := make([]string, len(g.Members))
	for i, m := range g.Members {
		out[i] = m.Value
	}
	return out
}

func (s *Server) groups(c *fiber.Ctx, r request, method, id string) error {
	switch {
	case id == "" && method == fiber.MethodGet:
		filter, err := ParseFilter(c.Query("filter"))
		if err != nil {
			return err
		}
		start, count, err := paging(c)
		if err != nil {
			return err
		}
		list, total, err := s.store.SCIMGroups(r.ctx, r.tenant, filter, start-1, count)
		if err != nil {
			return err
		}
		res := make([]any, len(list))
		for i, g := range list {
			res[i] = s.groupJSON(c, g, withMembers(c))
		}
		return writeJSON(c, 200, listResponse(total, start, res))
	case id == "" && method == fiber.MethodPost:
		var b groupBody
		if err := decode(c, &b); err != nil {
			return err
		}
		g := Group{TenantID: r.tenant, DisplayName: b.DisplayName, ExternalID: b.ExternalID}
		for _, m := range b.Members {
			g.Members = append(g.Members, Ref{Value: m.Value})
		}
		g, err := s.store.CreateSCIMGroup(r.ctx, g)
		if err != nil {
			return err
		}
		s.record(r, audit.SCIMGroupCreated, "group", g.ID, map[string]any{"displayName": g.DisplayName, "members": refIDs(g)})
		c.Set(fiber.HeaderLocation, s.location(c, "Groups/"+g.ID))
		return writeJSON(c, fiber.StatusCreated, s.groupJSON(c, g, true))
	case id == "":
		return &Error{Status: fiber.StatusMethodNotAllowed, Detail: "Groups takes GET and POST"}
	}
	g, err := s.store.SCIMGroup(r.ctx, r.tenant, id)
	if err != nil {
		return err
	}
	switch method {
	case fiber.MethodGet:
		return writeJSON(c, 200, s.groupJSON(c, g, withMembers(c)))
	case fiber.MethodPut:
		var b groupBody
		if err := decode(c, &b); err != nil {
			return err
		}
		members := []string{}
		for _, m := range b.Members {
			members = append(members, m.Value)
		}
		before := g
		g.DisplayName, g.ExternalID = b.DisplayName, b.ExternalID
		return s.saveGroup(c, r, before, g, members, nil, nil)
	case fiber.MethodPatch:
		var p patchBody
		if err := decode(c, &p); err != nil {
			return err
		}
		before := g
		members, add, remove, err := p.applyGroup(&g)
		if err != nil {
			return err
		}
		return s.saveGroup(c, r, before, g, members, add, remove)
	case fiber.MethodDelete:
		if err := s.store.DeleteSCIMGroup(r.ctx, r.tenant, id); err != nil {
			return err
		}
		s.record(r, audit.SCIMGroupDeleted, "group", id, map[string]any{"displayName": g.DisplayName, "members": refIDs(g)})
		return c.SendStatus(fiber.StatusNoContent)
	}
	return &Error{Status: fiber.StatusMethodNotAllowed, Detail: "a Group takes GET, PUT, PATCH and DELETE"}
}

func (s *Server) saveGroup(c *fiber.Ctx, r request, before, g Group, members, add, remove []string) error {
	after, err := s.store.UpdateSCIMGroup(r.ctx, g, members, add, remove)
	if err != nil {
		return err
	}
	was := map[string]bool{}
	for _, m := range before.Members {
		was[m.Value] = true
	}
	now := map[string]bool{}
	added, removed := []string{}, []string{}
	for _, m := range after.Members {
		now[m.Value] = true
		if !was[m.Value] {
			added = append(added, m.Value)
		}
	}
	for _, m := range before.Members {
		if !now[m.Value] {
			removed = append(removed, m.Value)
		}
	}
	d := map[string]any{"displayName": after.DisplayName, "added": added, "removed": removed}
	if before.DisplayName != after.DisplayName {
		d["renamedFrom"] = before.DisplayName
	}
	s.record(r, audit.SCIMGroupUpdated, "group", g.ID, d)
	if c.Method() == fiber.MethodPatch {
		// Entra asks a group PATCH to answer 204 (a group's members can be
		// many); Okta accepts 204 too.
		return c.SendStatus(fiber.StatusNoContent)
	}
	return writeJSON(c, 200, s.groupJSON(c, after, withMembers(c)))
}

// applyGroup applies a PATCH to g: members not nil replaces them; add and
// remove list member ids to add and remove.
func (p patchBody) applyGroup(g *Group) (members, add, remove []string, err error) {
	if err := p.check(); err != nil {
		return nil, nil, nil, err
	}
	for _, op := range p.Operations {
		kind := strings.ToLower(op.Op)
		attr := normalizeAttr(op.Path)
		switch {
		case attr == "":
			if kind == "remove" {
				return nil, nil, nil, badRequest("noTarget", "remove needs a path")
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(op.Value, &obj); err != nil {
				return nil, nil, nil, badRequest("invalidValue", "a path-less %s needs an object value: %v", op.Op, err)
			}
			for k, v := range obj {
				switch normalizeAttr(k) {
				case "id":
					// Okta repeats the id; it cannot change.
				case "displayname":
					if err := json.Unmarshal(v, &g.DisplayName); err != nil {
						return nil, nil, nil, badRequest("invalidValue", "displayName must be a string")
					}
				case "externalid":
					if err := json.Unmarshal(v, &g.ExternalID); err != nil {
						return nil, nil, nil, badRequest("invalidValue", "externalId must be a string")
					}
				case "members":
					ids, err := memberValues(v)
					if err != nil {
						return nil, nil, nil, err
					}
					if kind == "replace" {
						members, add = ids, nil
					} else {
						add = append(add, ids...)
					}
				default:
					return nil, nil, nil, badRequest("invalidPath", "attribute %q is not supported", k)
				}
			}
		case attr == "displayname":
			if kind == "remove" {
				return nil, nil, nil, badRequest("mutability", "displayName is required")
			}
			if err := json.Unmarshal(op.Value, &g.DisplayName); err != nil {
				return nil, nil, nil, badRequest("invalidValue", "displayName must be a string")
			}
		case attr == "externalid":
			g.ExternalID = ""
			if kind != "remove" {
				if err := json.Unmarshal(op.Value, &g.ExternalID); err != nil {
					return nil, nil, nil, badRequest("invalidValue", "externalId must be a string")
				}
			}
		case attr == "members":
			var ids []string
			if len(op.Value) > 0 && string(op.Value) != "null" {
				if ids, err = memberValues(op.Value); err != nil {
					return nil, nil, nil, err
				}
			}
			switch kind {
			case "add":
				add = append(add, ids...)
			case "replace":
				members, add = ids, nil
				if members == nil {
					members = []string{}
				}
			case "remove":
				if ids == nil {
					// RFC 7644 §3.5.2.2: remove without a filter or value
					// removes every member.
					members, add = []string{}, nil
				}
				remove = append(remove, ids...)
			}
		case strings.HasPrefix(attr, "members["):
			// members[value eq "id"] (Entra, Okta): remove that member.
			id, err := memberFilter(op.Path)
			if err != nil {
				return nil, nil, nil, err
			}
			if kind != "remove" {
				return nil, nil, nil, badRequest("invalidPath", "%s: a filtered members path only removes", op.Path)
			}
			remove = append(remove, id)
		default:
			return nil, nil, nil, badRequest("invalidPath", "attribute %q is not supported", op.Path)
		}
	}
	return members, add, remove, nil
}

// memberValues reads [{"value":"id"},…] (or one such object).
func memberValues(raw json.RawMessage) ([]string, error) {
	var list []struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		var one struct {
			Value string `json:"value"`
		}
		if err2 := json.Unmarshal(raw, &one); err2 != nil || one.Value == "" {
			return nil, badRequest("invalidValue", "members: want [{\"value\": \"<user id>\"}]: %v", err)
		}
		list = append(list, one)
	}
	out := make([]string, 0, len(list))
	for _, m := range list {
		if m.Value == "" {
			return nil, badRequest("invalidValue", "a member without a value")
		}
		out = append(out, m.Value)
	}
	return out, nil
}

// memberFilter reads the id of members[value eq "id"].
func memberFilter(path string) (string, error) {
	open := strings.Index(path, "[")
	if !strings.HasSuffix(path, "]") || open < 0 {
		return "", badRequest("invalidPath", "%q: want members[value eq \"<user id>\"]", path)
	}
	f, err := ParseFilter(path[open+1 : len(path)-1])
	if err != nil || len(f) != 1 || f[0].Attr != "value" {
		return "", badRequest("invalidPath", "%q: want members[value eq \"<user id>\"]", path)
	}
	return f[0].Value, nil
}

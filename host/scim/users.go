package scim

import (
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
)

// userBody is a User as the providers send it.
type userBody struct {
	UserName   string `json:"userName"`
	ExternalID string `json:"externalId"`
	Name       struct {
		GivenName  string `json:"givenName"`
		FamilyName string `json:"familyName"`
		Formatted  string `json:"formatted"`
	} `json:"name"`
	DisplayName string `json:"displayName"`
	Emails      []struct {
		Value   string `json:"value"`
		Type    string `json:"type"`
		Primary any    `json:"primary"`
	} `json:"emails"`
	Active any `json:"active"`
}

// toUser applies a full body (create, replace) to u; it returns whether
// the body sets active.
func (b userBody) toUser(u *User) (active *bool, err error) {
	if strings.TrimSpace(b.UserName) == "" {
		return nil, badRequest("invalidValue", "userName is required")
	}
	u.UserName, u.ExternalID, u.DisplayName = b.UserName, b.ExternalID, b.DisplayName
	u.GivenName, u.FamilyName = b.Name.GivenName, b.Name.FamilyName
	if u.DisplayName == "" {
		u.DisplayName = b.Name.Formatted
	}
	u.Email = ""
	for _, e := range b.Emails {
		p, _ := parseBool(e.Primary)
		if u.Email == "" || p {
			u.Email = e.Value
		}
	}
	if b.Active != nil {
		a, err := parseBool(b.Active)
		if err != nil {
			return nil, err
		}
		active = &a
	}
	return active, nil
}

func (s *Server) userJSON(c *fiber.Ctx, u User) map[string]any {
	groups := make([]map[string]string, 0, len(u.Groups))
	for _, g := range u.Groups {
		groups = append(groups, map[string]string{"value": g.Value, "display": g.Display, "$ref": s.location(c, "Groups/"+g.Value)})
	}
	out := map[string]any{"schemas": []string{UserSchema}, "id": u.ID, "userName": u.UserName, "active": u.Active,
		"name":   map[string]string{"givenName": u.GivenName, "familyName": u.FamilyName, "formatted": strings.TrimSpace(u.GivenName + " " + u.FamilyName)},
		"emails": []map[string]any{{"value": u.Email, "type": "work", "primary": true}}, "groups": groups,
		"meta": meta("User", s.location(c, "Users/"+u.ID), u.Created, u.Modified)}
	if u.ExternalID != "" {
		out["externalId"] = u.ExternalID
	}
	if u.DisplayName != "" {
		out["displayName"] = u.DisplayName
	}
	return out
}

func (s *Server) users(c *fiber.Ctx, r request, method, id string) error {
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
		list, total, err := s.store.SCIMUsers(r.ctx, r.tenant, filter, start-1, count)
		if err != nil {
			return err
		}
		res := make([]any, len(list))
		for i, u := range list {
			res[i] = s.userJSON(c, u)
		}
		return writeJSON(c, 200, listResponse(total, start, res))
	case id == "" && method == fiber.MethodPost:
		var b userBody
		if err := decode(c, &b); err != nil {
			return err
		}
		u := User{TenantID: r.tenant}
		active, err := b.toUser(&u)
		if err != nil {
			return err
		}
		u, err = s.store.CreateSCIMUser(r.ctx, u)
		if err != nil {
			return err
		}
		s.record(r, audit.SCIMUserCreated, "user", u.ID, map[string]string{"userName": u.UserName, "externalId": u.ExternalID, "email": u.Email})
		if u, err = s.setActive(r, u, active); err != nil {
			return err
		}
		c.Set(fiber.HeaderLocation, s.location(c, "Users/"+u.ID))
		return writeJSON(c, fiber.StatusCreated, s.userJSON(c, u))
	case id == "":
		return &Error{Status: fiber.StatusMethodNotAllowed, Detail: "Users takes GET and POST"}
	}
	u, err := s.store.SCIMUser(r.ctx, r.tenant, id)
	if err != nil {
		return err
	}
	switch method {
	case fiber.MethodGet:
		return writeJSON(c, 200, s.userJSON(c, u))
	case fiber.MethodPut:
		var b userBody
		if err := decode(c, &b); err != nil {
			return err
		}
		before := u
		active, err := b.toUser(&u)
		if err != nil {
			return err
		}
		return s.saveUser(c, r, before, u, active)
	case fiber.MethodPatch:
		var p patchBody
		if err := decode(c, &p); err != nil {
			return err
		}
		before := u
		active, err := p.applyUser(&u)
		if err != nil {
			return err
		}
		return s.saveUser(c, r, before, u, active)
	case fiber.MethodDelete:
		// Deactivated first: access ends even if the unlink fails.
		if err := s.store.DeactivateUser(r.ctx, r.tenant, id); err != nil {
			return err
		}
		if err := s.store.UnlinkSCIMUser(r.ctx, r.tenant, id); err != nil {
			return err
		}
		s.record(r, audit.SCIMUserDeleted, "user", id, map[string]string{"userName": u.UserName, "result": "deactivated and unlinked; data kept"})
		return c.SendStatus(fiber.StatusNoContent)
	}
	return &Error{Status: fiber.StatusMethodNotAllowed, Detail: "a User takes GET, PUT, PATCH and DELETE"}
}

// saveUser stores what changed of before and records it.
func (s *Server) saveUser(c *fiber.Ctx, r request, before, u User, active *bool) error {
	if changed := userChanges(before, u); len(changed) > 0 {
		var err error
		if u, err = s.store.UpdateSCIMUser(r.ctx, u); err != nil {
			return err
		}
		s.record(r, audit.SCIMUserUpdated, "user", u.ID, map[string]any{"userName": u.UserName, "changed": changed})
	}
	u, err := s.setActive(r, u, active)
	if err != nil {
		return err
	}
	return writeJSON(c, 200, s.userJSON(c, u))
}

// setActive deactivates or reactivates u when active says so.
func (s *Server) setActive(r request, u User, active *bool) (User, error) {
	if active == nil || *active == u.Active {
		return u, nil
	}
	if *active {
		if err := s.store.ReactivateUser(r.ctx, r.tenant, u.ID); err != nil {
			return u, err
		}
		s.record(r, audit.SCIMUserReactivated, "user", u.ID, map[string]string{"userName": u.UserName})
	} else {
		if err := s.store.DeactivateUser(r.ctx, r.tenant, u.ID); err != nil {
			return u, err
		}
		s.record(r, audit.SCIMUserDeactivated, "user", u.ID, map[string]string{"userName": u.UserName})
	}
	u.Active = *active
	return u, nil
}

// userChanges names the attributes that differ, with their values (none
// is a secret).
func userChanges(a, b User) map[string][2]string {
	out := map[string][2]string{}
	for _, f := range []struct{ name, x, y string }{{"userName", a.UserName, b.UserName}, {"externalId", a.ExternalID, b.ExternalID},
		{"name.givenName", a.GivenName, b.GivenName}, {"name.familyName", a.FamilyName, b.FamilyName},
		{"displayName", a.DisplayName, b.DisplayName}, {"email", a.Email, b.Email}} {
		if f.x != f.y {
			out[f.name] = [2]string{f.x, f.y}
		}
	}
	return out
}

// patchBody is a PatchOp request (RFC 7644 §3.5.2).
type patchBody struct {
	Schemas    []string  `json:"schemas"`
	Operations []patchOp `json:"Operations"`
}

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

func (p patchBody) check() error {
	if len(p.Operations) == 0 {
		return badRequest("invalidSyntax", "a PATCH needs Operations")
	}
	if len(p.Operations) > 1000 {
		return badRequest("invalidSyntax", "a PATCH has at most 1000 operations")
	}
	for _, op := range p.Operations {
		switch strings.ToLower(op.Op) {
		case "add", "replace", "remove":
		default:
			return badRequest("invalidSyntax", "op %q: want add, replace or remove", op.Op)
		}
	}
	return nil
}

// ignoredUserAttrs are attributes the providers send that agenthost keeps
// nothing of; setting them succeeds and changes nothing.
var ignoredUserAttrs = []string{"title", "phonenumbers", "addresses", "preferredlanguage", "locale", "timezone", "nickname",
	"profileurl", "usertype", "roles", "entitlements", "x509certificates", "ims", "photos", "name.middlename",
	"name.honorificprefix", "name.honorificsuffix", "password"}

// applyUser applies a PATCH to u; it returns the active flag when one set it.
func (p patchBody) applyUser(u *User) (*bool, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	var active *bool
	for _, op := range p.Operations {
		kind := strings.ToLower(op.Op)
		if op.Path == "" {
			if kind == "remove" {
				return nil, badRequest("noTarget", "remove needs a path")
			}
			var obj map[string]any
			if err := json.Unmarshal(op.Value, &obj); err != nil {
				return nil, badRequest("invalidValue", "a path-less %s needs an object value: %v", op.Op, err)
			}
			for k, v := range obj {
				if err := setUserAttr(u, k, v, &active); err != nil {
					return nil, err
				}
			}
			continue
		}
		var v any
		if kind != "remove" {
			if err := json.Unmarshal(op.Value, &v); err != nil {
				return nil, badRequest("invalidValue", "%s %s: the value is not JSON: %v", op.Op, op.Path, err)
			}
		}
		if err := setUserAttr(u, op.Path, v, &active); err != nil {
			return nil, err
		}
	}
	return active, nil
}

// setUserAttr sets one attribute by its path (v nil clears it).
func setUserAttr(u *User, path string, v any, active **bool) error {
	attr := normalizeAttr(path)
	if strings.HasPrefix(attr, strings.ToLower(EnterpriseUser)) {
		return nil // department, manager…: nothing kept
	}
	for _, ig := range ignoredUserAttrs {
		if attr == ig || strings.HasPrefix(attr, ig+"[") || strings.HasPrefix(attr, ig+".") {
			return nil
		}
	}
	str := func(to *string) error {
		s, err := asString(path, v)
		if err == nil {
			*to = s
		}
		return err
	}
	switch {
	case attr == "active":
		if v == nil {
			return badRequest("invalidValue", "active cannot be removed")
		}
		a, err := parseBool(v)
		if err != nil {
			return err
		}
		*active = &a
		return nil
	case attr == "username":
		if v == nil {
			return badRequest("mutability", "userName is required")
		}
		return str(&u.UserName)
	case attr == "externalid":
		return str(&u.ExternalID)
	case attr == "displayname":
		return str(&u.DisplayName)
	case attr == "name.givenname":
		return str(&u.GivenName)
	case attr == "name.familyname":
		return str(&u.FamilyName)
	case attr == "name.formatted":
		return nil // formatted is made from the parts
	case attr == "name":
		m, ok := v.(map[string]any)
		if !ok && v != nil {
			return badRequest("invalidValue", "name must be an object")
		}
		for k, x := range m {
			if err := setUserAttr(u, "name."+k, x, active); err != nil {
				return err
			}
		}
		return nil
	case attr == "emails" || strings.HasPrefix(attr, "emails["):
		return setEmail(u, v)
	}
	return badRequest("invalidPath", "attribute %q is not supported", path)
}

// setEmail takes the address from emails (a list, or one value of a
// filtered path like emails[type eq "work"].value).
func setEmail(u *User, v any) error {
	switch x := v.(type) {
	case string:
		u.Email = x
	case []any:
		for _, e := range x {
			m, _ := e.(map[string]any)
			s, _ := m["value"].(string)
			p, _ := parseBool(m["primary"])
			if s != "" && (p || len(x) == 1) {
				u.Email = s
			}
		}
	case nil:
		u.Email = "" // falls back to the userName
	default:
		return badRequest("invalidValue", "emails: want a list or an address, not %T", v)
	}
	if len(u.Email) > 320 {
		return badRequest("invalidValue", "the e-mail address is over 320 bytes")
	}
	return nil
}

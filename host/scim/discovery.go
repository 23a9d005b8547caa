package scim

import (
	"github.com/gofiber/fiber/v2"
)

// Discovery endpoints (RFC 7644 §4): what this server supports, so a
// provider's validator (Entra's, Okta's) knows what to send.

func serviceProviderConfig(location string) map[string]any {
	no := map[string]bool{"supported": false}
	return map[string]any{
		"schemas":          []string{"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"},
		"documentationUri": "https://github.com/agenthost/agenthost/blob/main/docs/scim.md",
		"patch":            map[string]bool{"supported": true},
		"bulk":             map[string]any{"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
		"filter":           map[string]any{"supported": true, "maxResults": MaxCount},
		"changePassword":   no,
		"sort":             no,
		"etag":             no,
		"authenticationSchemes": []map[string]any{{"type": "oauthbearertoken", "name": "OAuth Bearer Token",
			"description": "the tenant's SCIM token (agenthost admin scim-token)", "primary": true}},
		"meta": map[string]string{"resourceType": "ServiceProviderConfig", "location": location},
	}
}

func (s *Server) resourceType(c *fiber.Ctx, name string) map[string]any {
	rt := map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:ResourceType"}, "id": name, "name": name,
		"meta": map[string]string{"resourceType": "ResourceType", "location": s.location(c, "ResourceTypes/"+name)}}
	if name == "User" {
		rt["endpoint"], rt["schema"], rt["description"] = "/Users", UserSchema, "User Account"
		rt["schemaExtensions"] = []map[string]any{{"schema": EnterpriseUser, "required": false}}
	} else {
		rt["endpoint"], rt["schema"], rt["description"] = "/Groups", GroupSchema, "Group"
	}
	return rt
}

func (s *Server) resourceTypes(c *fiber.Ctx, id string) error {
	switch id {
	case "":
		return writeJSON(c, 200, listResponse(2, 1, []any{s.resourceType(c, "User"), s.resourceType(c, "Group")}))
	case "User", "Group":
		return writeJSON(c, 200, s.resourceType(c, id))
	}
	return &Error{Status: fiber.StatusNotFound, Detail: "no resource type " + id}
}

func attr(name, typ string, required bool, extra map[string]any) map[string]any {
	a := map[string]any{"name": name, "type": typ, "multiValued": false, "required": required, "caseExact": false,
		"mutability": "readWrite", "returned": "default", "uniqueness": "none"}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

func (s *Server) schema(c *fiber.Ctx, id string) map[string]any {
	var name, desc string
	var attrs []map[string]any
	switch id {
	case UserSchema:
		name, desc = "User", "User Account"
		attrs = []map[string]any{
			attr("userName", "string", true, map[string]any{"uniqueness": "server"}),
			attr("externalId", "string", false, map[string]any{"caseExact": true}),
			attr("displayName", "string", false, nil),
			attr("name", "complex", false, map[string]any{"subAttributes": []map[string]any{
				attr("givenName", "string", false, nil), attr("familyName", "string", false, nil),
				attr("formatted", "string", false, map[string]any{"mutability": "readOnly"})}}),
			attr("emails", "complex", false, map[string]any{"multiValued": true, "subAttributes": []map[string]any{
				attr("value", "string", false, nil), attr("type", "string", false, nil), attr("primary", "boolean", false, nil)}}),
			attr("active", "boolean", false, nil),
			attr("groups", "complex", false, map[string]any{"multiValued": true, "mutability": "readOnly", "subAttributes": []map[string]any{
				attr("value", "string", false, nil), attr("display", "string", false, nil)}}),
		}
	case GroupSchema:
		name, desc = "Group", "Group"
		attrs = []map[string]any{
			attr("displayName", "string", true, map[string]any{"uniqueness": "server"}),
			attr("externalId", "string", false, map[string]any{"caseExact": true}),
			attr("members", "complex", false, map[string]any{"multiValued": true, "subAttributes": []map[string]any{
				attr("value", "string", false, map[string]any{"mutability": "immutable"}), attr("display", "string", false, nil)}}),
		}
	default:
		return nil
	}
	return map[string]any{"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:Schema"}, "id": id, "name": name,
		"description": desc, "attributes": attrs,
		"meta": map[string]string{"resourceType": "Schema", "location": s.location(c, "Schemas/"+id)}}
}

func (s *Server) schemas(c *fiber.Ctx, id string) error {
	if id == "" {
		return writeJSON(c, 200, listResponse(2, 1, []any{s.schema(c, UserSchema), s.schema(c, GroupSchema)}))
	}
	if sc := s.schema(c, id); sc != nil {
		return writeJSON(c, 200, sc)
	}
	return &Error{Status: fiber.StatusNotFound, Detail: "no schema " + id}
}

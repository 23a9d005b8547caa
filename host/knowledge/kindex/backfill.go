package kindex

// ContentKey names a content: its sha256 in a tenant.
type ContentKey struct {
	TenantID string
	SHA256   string
}

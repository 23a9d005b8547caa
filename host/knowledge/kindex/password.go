package kindex

// Reasons a content is encrypted: no password was given, or the one given
// did not open it.
const (
	ReasonEncrypted     = "encrypted: "
	ReasonWrongPassword = "wrong password: "
)

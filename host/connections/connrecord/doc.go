// Package connrecord holds users' connections to providers as the SQL
// store keeps them (the secret already sealed by package connections) and
// OAuth authorisations in flight. They are plain values, so the store
// (host/store) keeps them and the connection service (host/connections)
// above it uses them, without either declaring the other's types.
package connrecord

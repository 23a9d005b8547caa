// Package dsrecord holds data sources as the SQL store keeps them: a
// source, its sync state and the changes a claimed sync makes, and the
// remote entries a sync stored. They are plain values, so the store
// (host/store) keeps them and the sync service (host/datasources) above it
// uses them, without either declaring the other's types.
package dsrecord

// Package ledger holds billing's records: the transactions (Record), their
// totals and report groups, a tenant's limits and budget, reservations of
// calls in flight, and the folding of groups into reports. They are plain
// values and pure functions, so the SQL store (host/store) keeps them
// without importing the meter (host/billing) and the model client below it,
// which declare the Store they need.
package ledger

// Package wire holds the request and response documents of capability
// "sqlquery", shared by the host and the PDK so they cannot drift.
package wire

// QueryRequest is one read-only query against a database the operator
// configured and granted to the caller's workspace.
type QueryRequest struct {
	Database string `json:"database"`
	// SQL is one statement; PostgreSQL takes $1, $2… placeholders, SQLite ?
	// or ?1, ?2….
	SQL    string `json:"sql"`
	Params []any  `json:"params,omitempty"`
	// MaxRows lowers the operator's row limit for this query (0: the limit).
	MaxRows int `json:"maxRows,omitempty"`
}

// QueryResult is a query's columns and rows. Values are JSON: numbers and
// booleans as such, numeric/decimal and integers beyond 2^53 as strings,
// binary as base64, timestamps as RFC 3339, dates as YYYY-MM-DD.
type QueryResult struct {
	Database string   `json:"database"`
	Columns  []Column `json:"columns"`
	Rows     [][]any  `json:"rows"`
	// Truncated is set when more rows existed than returned; TruncatedBy
	// says which limit cut them: "rows" or "bytes".
	Truncated   bool   `json:"truncated"`
	TruncatedBy string `json:"truncatedBy,omitempty"`
	ElapsedMs   int64  `json:"elapsedMs"`
}

// Column is a result column: its name and the database's type name.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Plugin sqlquery offers the agent sqlQuery (the "chatbot" tool set): one
// read-only SQL statement with parameters against a database the operator
// configured and granted to the workspace. The database refuses writes;
// rows, time and result size are bounded by the operator.
package main

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/sqlquery"
	"github.com/agenthost/agenthost/pdk/sqlquery/wire"
)

func main() {}

func init() {
	pdk.Tool("sqlQuery", "Run one read-only SQL statement against a database the operator made available. Pass values as params, "+
		"never inside the SQL: $1, $2… for PostgreSQL, ? for SQLite. Returns columns (name, type) and rows; truncated says a "+
		"row or size limit cut the result. An unknown database name is answered with the names you may use.", query, pdk.ReadOnly())
}

// QueryArgs are sqlQuery's arguments.
type QueryArgs struct {
	Database string `json:"database" description:"the database's name as the operator configured it" minLength:"1" maxLength:"100"`
	SQL      string `json:"sql" description:"one SELECT (or other reading) statement" minLength:"1" maxLength:"65536"`
	Params   []any  `json:"params,omitempty" description:"values for the placeholders, in order: strings, numbers, booleans or null" maxItems:"100"`
	MaxRows  int    `json:"maxRows,omitempty" description:"return at most this many rows (the operator's limit applies anyway)" minimum:"1" maximum:"10000"`
}

func query(a QueryArgs) (wire.QueryResult, error) {
	return sqlquery.Query(wire.QueryRequest{Database: a.Database, SQL: a.SQL, Params: a.Params, MaxRows: a.MaxRows})
}

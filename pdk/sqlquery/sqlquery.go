// Package sqlquery runs read-only, parameterised queries against the
// databases the operator configured and granted to the caller's workspace
// (capability "sqlquery"; declare it in plugin.json). The host holds the
// connection strings; a plugin names a database.
package sqlquery

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/sqlquery/wire"
)

// Query runs one statement.
func Query(r wire.QueryRequest) (wire.QueryResult, error) {
	var out wire.QueryResult
	err := pdk.Invoke(query, r, &out)
	return out, err
}

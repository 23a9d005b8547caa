package sqlquery

import (
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"time"

	"github.com/agenthost/agenthost/pdk/sqlquery/wire"
	"github.com/jackc/pgx/v5/pgtype"
)

// collector gathers rows within the limits: it keeps up to rows rows and
// result bytes, and notes which limit cut the result.
type collector struct {
	l     limits
	out   wire.QueryResult
	bytes int
}

// add takes one row; false means stop reading (a limit is reached).
func (c *collector) add(row []any) bool {
	if len(c.out.Rows) >= c.l.rows {
		c.out.Truncated, c.out.TruncatedBy = true, "rows"
		return false
	}
	b, err := json.Marshal(row)
	if err != nil {
		// Every value went through jsonValue; a failure is a bug, shown as one.
		b = []byte(`"unencodable row"`)
	}
	if c.bytes+len(b) > c.l.bytes {
		c.out.Truncated, c.out.TruncatedBy = true, "bytes"
		return false
	}
	c.bytes += len(b)
	c.out.Rows = append(c.out.Rows, row)
	return true
}

func (c *collector) result() wire.QueryResult {
	if c.out.Rows == nil {
		c.out.Rows = [][]any{}
	}
	if c.out.Columns == nil {
		c.out.Columns = []wire.Column{}
	}
	return c.out
}

// jsonValue makes a database value JSON: binary as base64, numeric and
// integers beyond 2^53 as strings (JSON readers lose their precision),
// timestamps as RFC 3339, dates as YYYY-MM-DD, NaN and infinities as
// strings, anything else by its driver or text form.
func jsonValue(v any, typ string) any {
	if typ == "char" { // PostgreSQL's one-byte "char", decoded as a number
		switch c := v.(type) {
		case uint8:
			return string(rune(c))
		case int32:
			return string(c)
		}
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x
	case int64:
		if x > 1<<53 || x < -(1<<53) {
			return strconv.FormatInt(x, 10)
		}
		return x
	case int8, int16, int32, uint8, uint16, uint32:
		return x
	case int:
		return jsonValue(int64(x), typ)
	case uint64:
		if x > 1<<53 {
			return strconv.FormatUint(x, 10)
		}
		return x
	case float32:
		return jsonValue(float64(x), typ)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return x
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		if typ == "date" || typ == "DATE" {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.RFC3339Nano)
	case [16]byte: // uuid
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16])
	case pgtype.Numeric:
		if !x.Valid {
			return nil
		}
		if x.NaN || x.InfinityModifier != pgtype.Finite {
			t, _ := x.Value()
			return t
		}
		t, err := x.Value()
		if err != nil {
			return nil
		}
		return t
	case netip.Prefix: // inet, cidr: a host address without /32 or /128, as PostgreSQL prints it
		if typ == "inet" && x.IsSingleIP() {
			return x.Addr().String()
		}
		return x.String()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e, "")
		}
		return out
	case map[string]any: // json, jsonb
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e, "")
		}
		return out
	case driver.Valuer:
		t, err := x.Value()
		if err != nil {
			return fmt.Sprint(x)
		}
		if _, same := t.(driver.Valuer); same {
			return fmt.Sprint(t)
		}
		return jsonValue(t, typ)
	case fmt.Stringer:
		return x.String()
	default:
		return fmt.Sprint(x)
	}
}

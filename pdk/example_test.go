package pdk_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/agenthost/agenthost/pdk"
)

// ForecastArgs are a tool's arguments: the host validates every call
// against the JSON Schema made from these fields and tags.
type ForecastArgs struct {
	City string `json:"city" description:"the city to forecast" minLength:"1"`
	Days int    `json:"days,omitempty" minimum:"1" maximum:"7" default:"1" description:"how many days ahead"`
}

// Forecast is the tool's result; its schema, declared with
// pdk.OutputSchema, lets the host check every result and tells MCP clients
// what comes back.
type Forecast struct {
	City  string  `json:"city"`
	TempC float64 `json:"tempC" description:"degrees Celsius"`
	Rain  bool    `json:"rain,omitempty"`
}

// The output schema generated from the result struct.
func ExampleSchema() {
	schema, err := pdk.Schema(reflect.TypeFor[Forecast]())
	if err != nil {
		panic(err)
	}
	fmt.Println(string(schema))
	// Output:
	// {"additionalProperties":false,"properties":{"city":{"type":"string"},"rain":{"type":"boolean"},"tempC":{"description":"degrees Celsius","type":"number"}},"required":["city","tempC"],"type":"object"}
}

// A tool registered with the schema of its arguments (generated) and of its
// result (pdk.OutputSchema). Plugins register their tools in init; the host
// asks for them when it loads the plugin.
func ExampleTool() {
	out, err := pdk.Schema(reflect.TypeFor[Forecast]())
	if err != nil {
		panic(err)
	}
	pdk.Tool("forecast", "Forecasts the weather of a city.", func(a ForecastArgs) (Forecast, error) {
		if strings.EqualFold(a.City, "Atlantis") {
			return Forecast{}, pdk.Errorf("not_found", "no weather station in %s", a.City)
		}
		return Forecast{City: a.City, TempC: 11.5}, nil
	}, pdk.ReadOnly(), pdk.OutputSchema(out))
}

// A failure with a code a model can act on: the host answers the call with
// {"ok":false,"error":{"code":…,"message":…}}.
func ExampleErrorf() {
	err := pdk.Errorf("not_found", "no weather station in %s", "Atlantis")
	var e *pdk.Error
	if errors.As(err, &e) {
		doc, _ := json.Marshal(e)
		fmt.Println(string(doc))
	}
	// Output:
	// {"code":"not_found","message":"no weather station in Atlantis"}
}

// An HTTP request through the host (capability "http"). The manifest
// declares the capability and the hosts the plugin may reach:
//
//	"capabilities": ["http"],
//	"limits": {"allowedHosts": ["api.weather.example", "*.weather.example"]}
//
// A request to any other host never leaves the server: the call ends with
// http_denied, naming the host and the operator's grant that would allow it
// (plugins.NAME.hosts in the grants file). A read-only tool may only GET and
// HEAD. This runs only inside a plugin (GOOS=wasip1).
func ExampleHTTP() {
	resp := pdk.HTTP(pdk.HTTPRequest{
		Method:  "GET",
		URL:     "https://api.weather.example/v1/now?city=Bern",
		Headers: map[string]string{"Accept": "application/json"},
	})
	if resp.Status != 200 {
		fmt.Println("the weather service answered", resp.Status)
		return
	}
	var now struct {
		TempC float64 `json:"tempC"`
	}
	if err := json.Unmarshal(resp.Body, &now); err != nil {
		fmt.Println("not JSON:", resp.Headers["content-type"])
		return
	}
	fmt.Println(now.TempC)
}

package wasm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/tetratelabs/wazero/api"
)

// Capability is a named set of host functions that a plugin may ask for in its
// manifest. Capabilities are deny by default: a plugin's module is linked only to
// the functions of capabilities it declares and the operator grants, and a module
// importing anything else fails to load.
type Capability struct {
	// Name is what manifests list, e.g. "http" or "progress".
	Name string
	// Description tells an operator what granting it allows.
	Description string
	// Functions are the host functions it links.
	Functions []HostFunction
}

// HostFunction is one function a capability links into a plugin.
type HostFunction struct {
	// Module and Name are the import the guest names, e.g. "agenthost:progress", "report".
	Module, Name    string
	Params, Results []api.ValueType
	// Write marks functions with effects outside the call. Read-only tools are never
	// linked to them: their instances get a function that refuses.
	Write bool
	// Func runs the function; stack holds the parameters and receives the results.
	// To fail, call c.Fail and panic with its result: the guest traps and the call
	// ends with that error.
	Func func(ctx context.Context, c *Call, stack []uint64)
}

// CapabilityPrefix starts the Wasm module name of every agenthost capability import.
const CapabilityPrefix = "agenthost:"

// Registry holds the capabilities a host knows, by name. Adding a capability
// touches one place: the Capability value given to NewRegistry.
type Registry struct {
	caps map[string]Capability
	// byImport maps module + "\x00" + name to the capability that provides it.
	byImport map[string]string
}

// NewRegistry builds a registry; names and imports must be unique.
func NewRegistry(caps ...Capability) (*Registry, error) {
	r := &Registry{caps: map[string]Capability{}, byImport: map[string]string{}}
	for _, c := range caps {
		if _, dup := r.caps[c.Name]; dup {
			return nil, fmt.Errorf("capability %q registered twice", c.Name)
		}
		r.caps[c.Name] = c
		for _, f := range c.Functions {
			if f.Module == KernelModule {
				return nil, fmt.Errorf("capability %q provides %s.%s: that module is the host's own", c.Name, f.Module, f.Name)
			}
			key := f.Module + "\x00" + f.Name
			if other, dup := r.byImport[key]; dup {
				return nil, fmt.Errorf("import %s.%s provided by capabilities %q and %q", f.Module, f.Name, other, c.Name)
			}
			r.byImport[key] = c.Name
		}
	}
	return r, nil
}

// Lookup returns the named capability.
func (r *Registry) Lookup(name string) (Capability, bool) {
	c, ok := r.caps[name]
	return c, ok
}

// Names lists the registered capabilities, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.caps))
	for n := range r.caps {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// provider returns the capability that provides an import, if any.
func (r *Registry) provider(module, name string) (string, bool) {
	c, ok := r.byImport[module+"\x00"+name]
	return c, ok
}

// CapabilityError is the error shape of a capability's JSON response.
type CapabilityError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *CapabilityError) Error() string { return e.Code + ": " + e.Message }

// DecodeRequest decodes a JSON capability request strictly: a field the
// host does not know is a guest's mistake worth reporting, not ignoring.
// Callers wrap the error in the code their capability answers with.
func DecodeRequest(req json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(req))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// JSONFunction builds a host function that follows the agenthost capability
// convention (docs/plugin-abi.md): one i64 parameter, the kernel offset of a JSON
// request; one i64 result, the kernel offset of {"ok":true,"data":...} or
// {"ok":false,"error":{"code","message"}}. handle's error becomes the error
// response (a *CapabilityError keeps its code).
func JSONFunction(module, name string, write bool, handle func(ctx context.Context, c *Call, req json.RawMessage) (any, error)) HostFunction {
	return HostFunction{
		Module: module, Name: name, Write: write,
		Params:  []api.ValueType{api.ValueTypeI64},
		Results: []api.ValueType{api.ValueTypeI64},
		Func: func(ctx context.Context, c *Call, stack []uint64) {
			req, err := c.Read(stack[0])
			if err != nil {
				panic(c.Fail(CodeTrap, "%s.%s: %v", module, name, err))
			}
			c.Free(stack[0])
			var resp []byte
			if !json.Valid(req) {
				resp = errorResponse(&CapabilityError{Code: "invalid_request", Message: "request is not JSON"})
			} else if data, herr := handle(ctx, c, req); herr != nil {
				resp = errorResponse(herr)
			} else {
				raw, merr := json.Marshal(data)
				if merr != nil {
					resp = errorResponse(merr)
				} else {
					resp = append(append([]byte(`{"ok":true,"data":`), raw...), '}')
				}
			}
			off, err := c.Write(resp)
			if err != nil {
				panic(c.Fail(CodeOutOfMemory, "%s.%s: %v", module, name, err))
			}
			stack[0] = off
		},
	}
}

func errorResponse(err error) []byte {
	ce := &CapabilityError{Code: "error", Message: err.Error()}
	var typed *CapabilityError
	if errors.As(err, &typed) {
		ce = typed
	}
	b, _ := json.Marshal(struct {
		OK    bool             `json:"ok"`
		Error *CapabilityError `json:"error"`
	}{false, ce})
	return b
}

// refuseReadOnly makes a write function refuse on the instances that serve
// read-only tools.
//
// Both variants of a plugin run on one runtime (one compile instead of two),
// so a write function is linked once for both and decides per call. This is
// as strict as linking a refusing function into a separate read-only
// runtime was, because the flag it reads cannot be chosen by the guest:
// Call.ReadOnly is set by the host, and instance.invoke and newInstance, the
// only ways guest code runs, set it from the instance's variant whatever the
// caller passed (a read-only instance never runs with it unset); the Call
// reaches the host function through the Go context wazero hands from the
// invocation to the host function, which no guest can see or change; a guest
// runs on its caller's goroutine, one call per instance at a time; and a host
// function reached without a Call panics (callFrom) rather than default to
// writable. What the guest keeps between calls cannot carry writes over
// either: the variants' instances are pooled apart. TestHostileSuite's
// "a read-only tool cannot call a write function" holds it.
func refuseReadOnly(f HostFunction) HostFunction {
	g := f
	g.Func = func(ctx context.Context, c *Call, stack []uint64) {
		if c.ReadOnly {
			panic(c.Fail(CodeCapabilityDenied, "%s.%s writes, and tool %q is read-only", f.Module, f.Name, c.Tool))
		}
		f.Func(ctx, c, stack)
	}
	return g
}

//lint:file-ignore SA1019 sampling, roots and logging are deprecated by revision 2026-07-28 (SEP-2577) but inside their deprecation window; clients of the older revisions and the conformance suite use them

package mcpserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host/wasm"
)

// inputRound is one run of a call under protocol 2026-07-28, where the
// server asks the client by returning inputRequests and the client calls
// again with inputResponses and the requestState (multi round-trip
// requests, SEP-2322). The plugin runs again from the start on each retry:
// the questions it already had answered are answered at once from the
// state, the new ones are collected, and the call ends input_required
// with them. The state carries every answer so far, signed by the server
// and bound to the caller, workspace, tool and arguments, so a client can
// neither forge answers nor move them to another call.
type inputRound struct {
	mu      sync.Mutex
	answers map[string]json.RawMessage // known answers by key
	asked   mcp.InputRequestMap        // questions without an answer
	n       int                        // questions asked, for keys a plugin did not give
	lacking *mcp.ClientCapabilities    // capabilities a question needed and the client lacks
}

func (r *inputRound) ask(key string, params mcp.InputRequest) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if key == "" {
		key = "input-" + strconv.Itoa(r.n)
	}
	if a, ok := r.answers[key]; ok {
		return a, nil
	}
	if r.asked == nil {
		r.asked = mcp.InputRequestMap{}
	}
	r.asked[key] = params
	return nil, &wasm.CapabilityError{Code: CodeInputRequired, Message: fmt.Sprintf("the client is asked %q; the call runs again with its answer", key)}
}

func (r *inputRound) missing(kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lacking == nil {
		r.lacking = &mcp.ClientCapabilities{}
	}
	switch kind {
	case "sampling":
		r.lacking.Sampling = &mcp.SamplingCapabilities{}
	case "elicitation":
		r.lacking.Elicitation = &mcp.ElicitationCapabilities{}
	case "roots":
		r.lacking.Roots.ListChanged = true
	}
}

// pending returns the questions to send, or nil when the call completed.
func (r *inputRound) pending() mcp.InputRequestMap {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked
}

// missingError is MCP's error for a call that needed a capability the
// client did not declare, when the plugin gave up for lack of it.
func (r *inputRound) missingError(res wasm.Result) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lacking == nil || res.OK || res.Error == nil || res.Error.Code != CodeMissingCapability {
		return nil
	}
	data, _ := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: r.lacking})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: res.Error.Message, Data: data}
}

// stateBinding is what a requestState is valid for.
type stateBinding struct {
	Tenant, User, Workspace, Tool string
	Args                          []byte
}

func (b stateBinding) digest() []byte {
	h := sha256.New()
	for _, s := range []string{b.Tenant, b.User, b.Workspace, b.Tool} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(b.Args)
	return h.Sum(nil)
}

// seal signs the answers for the binding: base64url(JSON) "." base64url(HMAC).
func (s *Server) seal(b stateBinding, answers map[string]json.RawMessage) string {
	body, _ := json.Marshal(answers)
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b.digest())
	mac.Write(body)
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

var errBadState = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
	Message: "invalid requestState: it was not issued by this server for this call (tampered, from another call, or from before a restart)"}

// open verifies a requestState and returns its answers.
func (s *Server) open(b stateBinding, state string) (map[string]json.RawMessage, error) {
	body64, mac64, ok := strings.Cut(state, ".")
	if !ok {
		return nil, errBadState
	}
	body, err1 := base64.RawURLEncoding.DecodeString(body64)
	sum, err2 := base64.RawURLEncoding.DecodeString(mac64)
	if err1 != nil || err2 != nil {
		return nil, errBadState
	}
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write(b.digest())
	mac.Write(body)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return nil, errBadState
	}
	var answers map[string]json.RawMessage
	if err := json.Unmarshal(body, &answers); err != nil {
		return nil, errBadState
	}
	return answers, nil
}

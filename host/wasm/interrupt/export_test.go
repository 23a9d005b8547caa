package interrupt

import "github.com/agenthost/agenthost/host/wasm/wasmbin"

// CheckSequence is the check Instrument inserts, for tests that take an
// instrumented module apart.
func CheckSequence(flag, fuel, yield uint32) []byte { return checkSequence(flag, fuel, yield) }

// NopAfterEveryInstruction returns module with a nop after every instruction
// as the rewriter decodes them (and no check), after the rewriter's checks.
func NopAfterEveryInstruction(module []byte) ([]byte, error) {
	secs, err := wasmbin.Parse(module)
	if err != nil {
		return nil, err
	}
	m, err := analyse(secs)
	if err != nil {
		return nil, err
	}
	for i, s := range secs {
		if s.ID == wasmbin.SecCode {
			if secs[i].Payload, err = rewriteCode(s.Payload, m, walker{m: m, every: []byte{0x01}}, nil); err != nil {
				return nil, err
			}
		}
	}
	return wasmbin.Encode(secs), nil
}

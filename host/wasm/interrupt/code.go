package interrupt

import (
	"fmt"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// maxLocals bounds the declared locals of one function (wazero's own limit is
// of the same order); a hostile count must not make us allocate.
const maxLocals = 50000

// instrumentCode rewrites every function body of a code section.
func instrumentCode(payload []byte, flag, fuel, yield uint32) ([]byte, error) {
	check := checkSequence(flag, fuel, yield)

	r := wasmbin.NewReader(payload)
	n, err := r.U32()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(payload)+len(payload)/8)
	out = wasmbin.AppendU32(out, n)
	body := make([]byte, 0, 4096)
	for i := uint32(0); i < n; i++ {
		size, err := r.U32()
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		code, err := r.Bytes(int(size))
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		body, err = instrumentBody(body[:0], code, check)
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		out = wasmbin.AppendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes in code section", wasmbin.ErrMalformed, r.Len())
	}
	return out, nil
}

// checkSequence is the code inserted at every loop header and function entry
// (see the package documentation).
func checkSequence(flag, fuel, yield uint32) []byte {
	getFuel := wasmbin.AppendU32([]byte{0x23}, fuel)
	setFuel := wasmbin.AppendU32([]byte{0x24}, fuel)
	var c []byte
	c = append(c, getFuel...)
	c = append(c, 0x41, 0x01, 0x6B) // i32.const 1; i32.sub
	c = append(c, setFuel...)
	c = append(c, getFuel...)
	c = append(c, 0x41, 0x00, 0x48) // i32.const 0; i32.lt_s
	c = append(c, 0x04, 0x40)       // if
	c = append(c, 0x41)             //   i32.const YieldEvery
	c = wasmbin.AppendS64(c, YieldEvery)
	c = append(c, setFuel...)                                                    //   global.set $fuel
	c = append(wasmbin.AppendU32(append(c, 0x10), yield), 0x1A)                  //   call $sched_yield; drop
	c = append(wasmbin.AppendU32(append(c, 0x23), flag), 0x04, 0x40, 0x00, 0x0B) // if $flag: unreachable
	return append(c, 0x0B)                                                       // end
}

// instrumentBody copies one function body, inserting check at its entry and
// after every loop instruction.
func instrumentBody(out, code, check []byte) ([]byte, error) {
	r := wasmbin.NewReader(code)
	groups, err := r.U32()
	if err != nil {
		return nil, err
	}
	var locals uint64
	for g := uint32(0); g < groups; g++ {
		c, err := r.U32()
		if err != nil {
			return nil, err
		}
		if locals += uint64(c); locals > maxLocals {
			return nil, fmt.Errorf("%w: %d locals", wasmbin.ErrMalformed, locals)
		}
		if _, err := r.Byte(); err != nil {
			return nil, err
		}
	}
	out = append(out, code[:r.Offset()]...)
	out = append(out, check...)
	depth := 1 // the function body is a block closed by the final end
	for depth > 0 {
		start := r.Offset()
		op, err := r.Byte()
		if err != nil {
			return nil, err
		}
		isLoop := op == 0x03
		switch op {
		case 0x02, 0x03, 0x04: // block, loop, if
			depth++
			if err := skipBlockType(r); err != nil {
				return nil, err
			}
		case 0x0B: // end
			depth--
		default:
			if err := skipImmediates(r, op); err != nil {
				return nil, err
			}
		}
		out = append(out, code[start:r.Offset()]...)
		if isLoop {
			out = append(out, check...)
		}
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the end of a function body", wasmbin.ErrMalformed, r.Len())
	}
	return out, nil
}

func skipBlockType(r *wasmbin.Reader) error {
	_, err := r.S33()
	return err
}

// skipImmediates consumes the immediates of every instruction except the
// block-structured ones handled by the caller.
func skipImmediates(r *wasmbin.Reader, op byte) error {
	u32 := func(k int) error {
		for ; k > 0; k-- {
			if _, err := r.U32(); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0F || op == 0x1A || op == 0x1B || op == 0xD1:
		return nil // unreachable nop else return drop select ref.is_null
	case op == 0x0C || op == 0x0D || op == 0x10 || op == 0x12 || op == 0xD2:
		return u32(1) // br br_if call return_call ref.func
	case op == 0x0E: // br_table
		n, err := r.U32()
		if err != nil {
			return err
		}
		if int(n) > r.Len() {
			return fmt.Errorf("%w: br_table of %d labels", wasmbin.ErrMalformed, n)
		}
		return u32(int(n) + 1)
	case op == 0x11 || op == 0x13: // call_indirect return_call_indirect
		return u32(2)
	case op == 0x1C: // select t*
		n, err := r.U32()
		if err != nil {
			return err
		}
		_, err = r.Bytes(int(n))
		return err
	case op >= 0x20 && op <= 0x26: // local.*, global.*, table.get/set
		return u32(1)
	case op >= 0x28 && op <= 0x3E: // loads and stores: memarg
		align, err := r.U32()
		if err != nil {
			return err
		}
		if align&0x40 != 0 {
			return fmt.Errorf("%w: multi-memory memarg", ErrUnsupported)
		}
		_, err = r.U64()
		return err
	case op == 0x3F || op == 0x40: // memory.size memory.grow
		_, err := r.Byte()
		return err
	case op == 0x41:
		_, err := r.S32()
		return err
	case op == 0x42:
		_, err := r.S64()
		return err
	case op == 0x43:
		_, err := r.Bytes(4)
		return err
	case op == 0x44:
		_, err := r.Bytes(8)
		return err
	case op >= 0x45 && op <= 0xC4: // numeric and sign extension: no immediates
		return nil
	case op == 0xD0: // ref.null t
		_, err := r.Byte()
		return err
	case op == 0xFC:
		sub, err := r.U32()
		if err != nil {
			return err
		}
		switch {
		case sub <= 7: // saturating truncation
			return nil
		case sub == 8: // memory.init dataidx memidx
			if err := u32(1); err != nil {
				return err
			}
			_, err := r.Byte()
			return err
		case sub == 9 || sub == 13 || sub == 15 || sub == 16 || sub == 17: // data.drop elem.drop table.grow/size/fill
			return u32(1)
		case sub == 10: // memory.copy
			_, err := r.Bytes(2)
			return err
		case sub == 11: // memory.fill
			_, err := r.Byte()
			return err
		case sub == 12 || sub == 14: // table.init table.copy
			return u32(2)
		}
		return fmt.Errorf("%w: instruction 0xFC %d", ErrUnsupported, sub)
	}
	return fmt.Errorf("%w: opcode 0x%02X", ErrUnsupported, op)
}

package wasmbin_test

import (
	"errors"
	"testing"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

func TestUnsignedLEB128(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want uint32
		err  bool
	}{
		{"zero", []byte{0x00}, 0, false},
		{"one byte", []byte{0x7F}, 127, false},
		{"padded zero", []byte{0x80, 0x80, 0x80, 0x80, 0x00}, 0, false},
		{"max", []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x0F}, 1<<32 - 1, false},
		// 1 + 2^32: the bits beyond 32 would be dropped, reading 1.
		{"overflow", []byte{0x81, 0x80, 0x80, 0x80, 0x10}, 0, true},
		{"continuation in the last byte", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, true},
		{"truncated", []byte{0x80}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := wasmbin.NewReader(tc.in).U32()
			if tc.err {
				if !errors.Is(err, wasmbin.ErrMalformed) {
					t.Fatalf("U32(% x) = %d, %v; want ErrMalformed", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("U32(% x) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
	if _, err := wasmbin.NewReader([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}).U64(); err != nil {
		t.Fatalf("U64(max) = %v", err)
	}
	if _, err := wasmbin.NewReader([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02}).U64(); !errors.Is(err, wasmbin.ErrMalformed) {
		t.Fatalf("U64(2^64) = %v, want ErrMalformed", err)
	}
}

func TestAppendReadRoundTrip(t *testing.T) {
	for _, v := range []uint32{0, 1, 127, 128, 300, 1 << 20, 1<<32 - 1} {
		got, err := wasmbin.NewReader(wasmbin.AppendU32(nil, v)).U32()
		if err != nil || got != v {
			t.Errorf("U32(AppendU32(%d)) = %d, %v", v, got, err)
		}
	}
	for _, v := range []int64{0, -1, 63, 64, -64, -65, 1 << 40, -1 << 40} {
		got, err := wasmbin.NewReader(wasmbin.AppendS64(nil, v)).S64()
		if err != nil || got != v {
			t.Errorf("S64(AppendS64(%d)) = %d, %v", v, got, err)
		}
	}
}

// Command blockcopy is a test plugin for the block copies of module
// agenthost:kernel (docs/plugin-abi.md). roundTrip sends a payload through a
// capability and reads it back, as a connector moves a download; raw calls
// the imports with whatever offsets, pointers and lengths it is given, as a
// hostile guest would.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"unsafe"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/files"
)

//go:wasmimport agenthost:kernel read
func blockRead(offset uint64, ptr, n uint32)

//go:wasmimport agenthost:kernel write
func blockWrite(ptr, n uint32) uint64

//go:wasmimport extism:host/env free
func extismFree(offset uint64)

//go:wasmimport extism:host/env length
func extismLength(offset uint64) uint64

type roundTripArgs struct {
	Size int `json:"size" minimum:"0" description:"payload bytes"`
}

type roundTripResult struct {
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

// rawArgs name one step. Pointers are absolute guest addresses, or
// relative to the step's buffer of size bytes.
type rawArgs struct {
	Op       string `json:"op" enum:"read,write,readFreed,readStale,readInside,roundTrip,overlap,fill" description:"what to do"`
	Offset   uint64 `json:"offset,omitempty" description:"kernel offset for read"`
	Ptr      uint32 `json:"ptr,omitempty" description:"guest address (absolute unless relative)"`
	Len      uint32 `json:"len,omitempty" description:"length passed to the import"`
	Size     int    `json:"size,omitempty" description:"bytes of the block or buffer the op prepares"`
	Relative bool   `json:"relative,omitempty" description:"ptr is relative to the op's buffer"`
}

// stale is a block offset of an earlier call, kept in guest memory.
var stale uint64

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

func addr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(&b[0])))
}

func init() {
	pdk.Tool("roundTrip", "Writes a file of size bytes through the files capability and reads it back.", func(a roundTripArgs) (roundTripResult, error) {
		data := pattern(a.Size)
		w, err := files.Write("payload.bin", "application/octet-stream", data, "")
		if err != nil {
			return roundTripResult{}, err
		}
		f, err := files.Read(w.FileID, 0)
		if err != nil {
			return roundTripResult{}, err
		}
		sum := sha256.Sum256(f.Data)
		return roundTripResult{Size: len(f.Data), SHA256: hex.EncodeToString(sum[:])}, nil
	})
	pdk.Tool("raw", "Calls agenthost:kernel's read or write with the given values.", func(a rawArgs) (string, error) {
		buf := pattern(a.Size)
		ptr := a.Ptr
		if a.Relative {
			ptr += addr(buf)
		}
		switch a.Op {
		case "read":
			// A block of size bytes (if any) is made first, so offset 0
			// relative reads name it.
			off := a.Offset
			if a.Size > 0 && a.Offset == 0 {
				off = blockWrite(addr(buf), uint32(len(buf)))
			}
			blockRead(off, ptr, a.Len)
			return "read", nil
		case "write":
			return strconv.FormatUint(blockWrite(ptr, a.Len), 10), nil
		case "readFreed":
			off := blockWrite(addr(buf), uint32(len(buf)))
			extismFree(off)
			out := make([]byte, len(buf))
			blockRead(off, addr(out), uint32(len(out)))
			return "read a freed block", nil
		case "readStale":
			if stale == 0 {
				stale = blockWrite(addr(buf), uint32(len(buf)))
				return "kept", nil
			}
			out := make([]byte, len(buf))
			blockRead(stale, addr(out), uint32(len(out)))
			return "read an earlier call's block", nil
		case "readInside":
			off := blockWrite(addr(buf), uint32(len(buf)))
			out := make([]byte, len(buf))
			blockRead(off+8, addr(out), uint32(len(out)-8))
			return "read inside a block", nil
		case "roundTrip":
			// Through the kernel and back: the bytes must come back intact.
			off := blockWrite(addr(buf), uint32(len(buf)))
			if n := extismLength(off); n != uint64(len(buf)) {
				return "", pdk.Errorf("length", "block of %d bytes, wrote %d", n, len(buf))
			}
			out := make([]byte, len(buf))
			blockRead(off, addr(out), uint32(len(out)))
			extismFree(off)
			a, b := sha256.Sum256(buf), sha256.Sum256(out)
			if a != b {
				return "", pdk.Errorf("mismatch", "the block read back differs")
			}
			return hex.EncodeToString(a[:]), nil
		case "overlap":
			// Read a block back over the buffer it was written from,
			// shifted by Ptr bytes: a copy, whatever the overlap.
			off := blockWrite(addr(buf), uint32(len(buf)-int(a.Ptr)))
			blockRead(off, addr(buf)+a.Ptr, uint32(len(buf)-int(a.Ptr)))
			want := pattern(a.Size)
			for i := int(a.Ptr); i < len(buf); i++ {
				if buf[i] != want[i-int(a.Ptr)] {
					return "", pdk.Errorf("mismatch", "byte %d is %d, want %d", i, buf[i], want[i-int(a.Ptr)])
				}
			}
			return "intact", nil
		case "fill":
			// Blocks of size bytes, never freed, until the kernel is full.
			for i := 0; ; i++ {
				if blockWrite(addr(buf), uint32(len(buf))) == 0 {
					return "", pdk.Errorf("zero", "block %d has offset 0", i)
				}
			}
		}
		return "", pdk.Errorf("op", "unknown op %q", a.Op)
	})
}

func main() {}

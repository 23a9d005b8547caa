// Command inputreader is a test plugin for the input capability: it hashes a
// range of the call's input document, read in chunks of a given size.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/input"
)

type args struct {
	Offset int64 `json:"offset" minimum:"0"`
	Length int64 `json:"length" description:"bytes to read; 0 reads to the end" minimum:"0"`
	Chunk  int   `json:"chunk" description:"read size" minimum:"1" maximum:"67108864"`
}

type result struct {
	Size   int64  `json:"size"`
	Read   int64  `json:"read"`
	SHA256 string `json:"sha256"`
}

func init() {
	pdk.Tool("digest", "Hashes a range of the input document.", func(a args) (result, error) {
		size, err := input.Size()
		if err != nil {
			return result{}, pdk.Errorf("no_input", "%v", err)
		}
		end := size
		if a.Length > 0 && a.Offset+a.Length < size {
			end = a.Offset + a.Length
		}
		h := sha256.New()
		buf := make([]byte, a.Chunk)
		var read int64
		for off := a.Offset; off < end; {
			n, err := input.Reader{}.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
			h.Write(buf[:n])
			read += int64(n)
			off += int64(n)
			if errors.Is(err, io.EOF) || n == 0 {
				break
			}
			if err != nil {
				return result{}, err
			}
		}
		return result{Size: size, Read: read, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
	}, pdk.ReadOnly())
}

func main() {}

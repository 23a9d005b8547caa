package extract

import (
	"encoding/binary"
	"errors"
	"io"
)

// probeWAV walks the RIFF chunks of a WAVE file for its format and the size
// of its data: duration = data bytes / byte rate. RF64 files keep the real
// sizes in their ds64 chunk.
func probeWAV(r io.ReaderAt, size int64) (mediaInfo, error) {
	info := mediaInfo{kind: contentAudio, format: "wav"}
	head := make([]byte, 12)
	if err := readAtFull(r, head, 0); err != nil {
		return info, err
	}
	rf64 := string(head[:4]) == "RF64"
	var (
		byteRate uint32
		dataSize int64 = -1
		ds64Data int64 = -1
	)
	off := int64(12)
	// A bounded walk: real files have a handful of chunks.
	for i := 0; i < 256 && off+8 <= size; i++ {
		ch := make([]byte, 8)
		if err := readAtFull(r, ch, off); err != nil {
			break
		}
		id, n := string(ch[:4]), int64(binary.LittleEndian.Uint32(ch[4:]))
		switch id {
		case "fmt ":
			f := make([]byte, 16)
			if err := readAtFull(r, f, off+8); err != nil {
				return info, err
			}
			codec := binary.LittleEndian.Uint16(f)
			info.channels = int(binary.LittleEndian.Uint16(f[2:]))
			info.sampleRate = int(binary.LittleEndian.Uint32(f[4:]))
			byteRate = binary.LittleEndian.Uint32(f[8:])
			info.bitrate = int(byteRate) * 8
			info.codec = wavCodec(codec)
		case "ds64":
			if rf64 {
				f := make([]byte, 24)
				if err := readAtFull(r, f, off+8); err == nil {
					ds64Data = int64(binary.LittleEndian.Uint64(f[8:]))
				}
			}
		case "data":
			dataSize = n
			if n == 0xffffffff && ds64Data >= 0 {
				dataSize = ds64Data
			}
			// Streaming writers leave the size unset or too large: the
			// file's end bounds the data.
			if dataSize <= 0 || off+8+dataSize > size {
				dataSize = size - off - 8
			}
		}
		if id == "data" {
			break
		}
		off += 8 + n + n&1
	}
	if byteRate == 0 {
		return info, errors.New("no fmt chunk")
	}
	if dataSize > 0 {
		info.duration = float64(dataSize) / float64(byteRate)
	}
	return info, nil
}

func wavCodec(tag uint16) string {
	switch tag {
	case 1:
		return "pcm"
	case 3:
		return "float"
	case 6:
		return "alaw"
	case 7:
		return "ulaw"
	case 0x11:
		return "ima-adpcm"
	case 0x55:
		return "mp3"
	case 0xfffe:
		return "extensible"
	}
	return ""
}

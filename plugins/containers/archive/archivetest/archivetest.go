// Package archivetest builds hostile archives byte by byte for tests: zip
// entries whose headers lie, tar streams of many tiny members, cut streams.
// archive/zip and archive/tar refuse to write most of these, so the bytes
// are laid out here by hand.
package archivetest

import (
	"archive/tar"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// ZipEntry is one raw zip member: its bytes as stored and what its headers
// declare about them, unchecked.
type ZipEntry struct {
	Name   string
	Method uint16 // 0 stored, 8 deflate, anything else as written
	Data   []byte // the bytes as stored (already compressed for method 8)
	CRC    uint32
	// CSize and USize are the declared compressed and expanded sizes.
	CSize, USize uint32
}

// Stored is a correct stored entry.
func Stored(name string, data []byte) ZipEntry {
	n := uint32(len(data))
	return ZipEntry{Name: name, Data: data, CRC: crc32.ChecksumIEEE(data), CSize: n, USize: n}
}

// Deflated is a correct deflate entry.
func Deflated(name string, data []byte) ZipEntry {
	c := Deflate(data)
	return ZipEntry{Name: name, Method: 8, Data: c, CRC: crc32.ChecksumIEEE(data), CSize: uint32(len(c)), USize: uint32(len(data))}
}

// Deflate compresses data as a raw deflate stream.
func Deflate(data []byte) []byte {
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.BestCompression)
	fw.Write(data)
	fw.Close()
	return b.Bytes()
}

// Zip lays out local headers, data, central directory and end record.
func Zip(entries ...ZipEntry) []byte {
	var out, dir bytes.Buffer
	le := func(b *bytes.Buffer, v any) { binary.Write(b, binary.LittleEndian, v) }
	for _, e := range entries {
		off := uint32(out.Len())
		le(&out, uint32(0x04034b50))
		le(&out, uint16(20)) // version needed
		le(&out, uint16(0))  // flags
		le(&out, e.Method)
		le(&out, uint32(0)) // time, date
		le(&out, e.CRC)
		le(&out, e.CSize)
		le(&out, e.USize)
		le(&out, uint16(len(e.Name)))
		le(&out, uint16(0))
		out.WriteString(e.Name)
		out.Write(e.Data)

		le(&dir, uint32(0x02014b50))
		le(&dir, uint16(20)) // made by (MS-DOS)
		le(&dir, uint16(20))
		le(&dir, uint16(0))
		le(&dir, e.Method)
		le(&dir, uint32(0))
		le(&dir, e.CRC)
		le(&dir, e.CSize)
		le(&dir, e.USize)
		le(&dir, uint16(len(e.Name)))
		le(&dir, uint16(0)) // extra
		le(&dir, uint16(0)) // comment
		le(&dir, uint16(0)) // disk
		le(&dir, uint16(0)) // internal attributes
		le(&dir, uint32(0)) // external attributes
		le(&dir, off)
		dir.WriteString(e.Name)
	}
	start := uint32(out.Len())
	out.Write(dir.Bytes())
	le(&out, uint32(0x06054b50))
	le(&out, uint16(0))
	le(&out, uint16(0))
	le(&out, uint16(len(entries)))
	le(&out, uint16(len(entries)))
	le(&out, uint32(dir.Len()))
	le(&out, start)
	le(&out, uint16(0))
	return out.Bytes()
}

// BadZipCase is one hostile entry: how to build it and the problem kinds a
// reader may give for it.
type BadZipCase struct {
	Name  string
	Entry ZipEntry
	Kinds []string
}

// BadZipCases are the per-entry failures a zip walk must survive: data
// longer than declared (deflated and stored), a CRC mismatch, method 99
// (AES) and 14 (LZMA), a corrupt and a cut deflate stream.
func BadZipCases() []BadZipCase {
	long := bytes.Repeat([]byte("longer than it says "), 200) // 4,000 bytes
	longC := Deflate(long)
	garbage := []byte("\xff\xfe this is not a deflate stream \x00\x01\x02\x03 at all, whatever the header says")
	cut := Deflate(bytes.Repeat([]byte("abcdefghij0123456789"), 5000))
	cut = cut[:len(cut)/2]
	crcBad := Stored("crc.txt", []byte("the checksum in the header is not this text's"))
	crcBad.CRC ^= 0xdeadbeef
	storedLong := ZipEntry{Name: "stored-long.txt", Data: long, CRC: crc32.ChecksumIEEE(long), CSize: 100, USize: 100}
	m99 := Stored("aes.bin", []byte("pretend AES payload"))
	m99.Method = 99
	m14 := Stored("lzma.bin", []byte("pretend LZMA payload"))
	m14.Method = 14
	return []BadZipCase{
		{"deflated data longer than declared", ZipEntry{Name: "long.txt", Method: 8, Data: longC, CRC: crc32.ChecksumIEEE(long[:100]), CSize: uint32(len(longC)), USize: 100}, []string{"bomb", "corrupt"}},
		{"stored data longer than declared", storedLong, []string{"corrupt"}},
		{"CRC mismatch", crcBad, []string{"corrupt"}},
		{"method 99", m99, []string{"encrypted", "unsupported"}},
		{"method 14", m14, []string{"unsupported"}},
		{"corrupt deflate stream", ZipEntry{Name: "corrupt.txt", Method: 8, Data: garbage, CRC: 1, CSize: uint32(len(garbage)), USize: 1000}, []string{"corrupt", "truncated"}},
		{"cut deflate stream", ZipEntry{Name: "cut.txt", Method: 8, Data: cut, CRC: 1, CSize: uint32(len(cut)), USize: 100_000}, []string{"truncated", "corrupt"}},
	}
}

// After are the good entries written after each bad one: name and text.
var After = [][2]string{
	{"after-1.txt", "the first good entry after the bad one"},
	{"after-2.txt", "the second good entry, deflated"},
}

// BadZip is a zip of bad followed by the good entries of After (the first
// stored, the second deflated).
func BadZip(bad ...ZipEntry) []byte {
	es := append([]ZipEntry{}, bad...)
	es = append(es, Stored(After[0][0], []byte(After[0][1])), Deflated(After[1][0], []byte(After[1][1])))
	return Zip(es...)
}

// TinyTar is a tar of n tiny members "d<i/500>/f<i>.txt" holding "file <i>".
func TinyTar(n int) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for i := range n {
		data := fmt.Appendf(nil, "file %d", i)
		tw.WriteHeader(&tar.Header{Name: TinyName(i), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))})
		tw.Write(data)
	}
	tw.Close()
	return b.Bytes()
}

// TinyName is the path of member i of TinyTar.
func TinyName(i int) string { return fmt.Sprintf("d%02d/f%05d.txt", i/500, i) }

// Gzip compresses b as a gzip stream.
func Gzip(b []byte) []byte {
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

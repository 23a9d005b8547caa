package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"io"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// TestZipNamesWithoutUTF8Flag: names a Chinese, Japanese or Russian
// Windows wrote in its DOS code page, without the UTF-8 flag (as the
// Windows shell's "compressed folder" and older WinRAR and 7-Zip do), are
// decoded by detection; before, GBK names came out as CP437 mojibake.
func TestZipNamesWithoutUTF8Flag(t *testing.T) {
	cases := []struct {
		name string
		enc  encoding.Encoding
	}{
		{"财务报告/二零二四年度预算.xlsx", simplifiedchinese.GBK},
		{"会議資料/議事録.txt", japanese.ShiftJIS},
		{"Отчёт/бюджет на год.txt", charmap.CodePage866},
		{"Résumé du projet.txt", charmap.CodePage437},
		{"plain-ascii.txt", charmap.CodePage437},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, c := range cases {
		raw, err := c.enc.NewEncoder().String(c.name)
		if err != nil {
			t.Fatal(err)
		}
		// NonUTF8 keeps archive/zip from setting the UTF-8 flag.
		w, err := zw.CreateHeader(&zip.FileHeader{Name: raw, Method: zip.Store, NonUTF8: true})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("data of " + c.name))
	}
	// 7-Zip's way: the name in the DOS code page, its UTF-8 form in the
	// Unicode Path extra field.
	const both = "Ελληνικά/σημειώσεις.txt"
	oem, _ := charmap.CodePage437.NewEncoder().String("Ellinika/simeioseis.txt")
	field := []byte{1, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(field[1:], crc32.ChecksumIEEE([]byte(oem)))
	field = append(field, both...)
	extra := binary.LittleEndian.AppendUint16(binary.LittleEndian.AppendUint16(nil, 0x7075), uint16(len(field)))
	w, err := zw.CreateHeader(&zip.FileHeader{Name: oem, Method: zip.Store, NonUTF8: true, Extra: append(extra, field...)})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("notes"))
	zw.Close()
	cases = append(cases, struct {
		name string
		enc  encoding.Encoding
	}{both, nil})
	got := map[string]bool{}
	_, err = Walk(context.Background(), bytes.NewReader(buf.Bytes()), int64(buf.Len()), "names.zip", DefaultLimits(), func(e Entry, _ io.Reader) error {
		got[e.Path] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !got["names.zip/"+c.name] {
			t.Errorf("%q not found among %v", c.name, got)
		}
	}
}

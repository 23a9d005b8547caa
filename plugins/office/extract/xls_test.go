package extract

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/testcorpus"
)

// TestXLSBIFF5: an Excel 5.0/95 workbook (BIFF5: the Book stream, no
// shared strings, LABEL records of 8-bit strings in the CODEPAGE's code
// page, BOUNDSHEET names as byte strings; gn-biff5-stations.xls, Gnumeric's
// save of the source beside it) is read as the BIFF8 save of the same
// source is: the same objects, names and references.
func TestXLSBIFF5(t *testing.T) {
	idx, biff5 := mustRun(t, testcorpus.Read(t, "office", "xls", "gn-biff5-stations.xls"), "stations.xls", "", Limits{})
	got := strings.Join(texts(biff5), "\n")
	for _, want := range []string{
		"| Säntis | 2502 | 1950-09-01 |",
		"| Jungfraujoch — Sphinx | 3571.5 | 1931-07-01 |",
		"| Total | 6073.5 | n=2 |", // a formula's number and a formula's string (STRING record)
		"Messungen ab März, Grüße aus Genève",
		"| 25% | TRUE |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if idx.MIMEType != mimeXLS || idx.Structure["biff"] != 5 {
		t.Errorf("MIME type %s, structure %v", idx.MIMEType, idx.Structure)
	}
	if len(biff5) == 0 || biff5[0].Ref.SheetName != "Stationen Zürich" || biff5[0].Ref.Location != "sheet:Stationen Zürich!A1:C4" {
		t.Errorf("first object's reference %+v", biff5[0].Ref)
	}
	_, biff8 := mustRun(t, testcorpus.Read(t, "office", "xls", "gn-biff8-stations.xls"), "stations.xls", "", Limits{})
	if len(biff5) != len(biff8) {
		t.Fatalf("%d objects from BIFF5, %d from BIFF8", len(biff5), len(biff8))
	}
	for i := range biff5 {
		if biff5[i].Data != biff8[i].Data || biff5[i].Ref != biff8[i].Ref {
			t.Errorf("object %d:\nBIFF5 %+v %s\nBIFF8 %+v %s", i, biff5[i].Ref, biff5[i].Data, biff8[i].Ref, biff8[i].Data)
		}
	}
}

// TestXLSRefusals: what is not read is refused by name: a BIFF5 workbook
// with a FILEPASS record (the real file with its CODEPAGE record turned
// into one) is encrypted; Excel 2.x, 3.0 and 4.0 files, bare BIFF streams
// whose BOF record is 0x0009, 0x0209 or 0x0409 (OpenOffice.org's
// "Microsoft Excel File Format", 5.8 BOF), are unsupported, as is a BIFF
// version past BIFF8 in a Book stream.
func TestXLSRefusals(t *testing.T) {
	real := testcorpus.Read(t, "office", "xls", "gn-biff5-stations.xls")
	patched := func(find, put []byte) []byte {
		i := bytes.Index(real, find)
		if i < 0 {
			t.Fatalf("no %x in the file", find)
		}
		b := bytes.Clone(real)
		copy(b[i:], put)
		return b
	}
	bof := func(id, version, typ uint16) []byte {
		b := binary.LittleEndian.AppendUint16(nil, id)
		b = binary.LittleEndian.AppendUint16(b, 4)
		b = binary.LittleEndian.AppendUint16(b, version)
		b = binary.LittleEndian.AppendUint16(b, typ)
		return append(b, 0x0a, 0, 0, 0) // EOF
	}
	for _, c := range []struct {
		name string
		file []byte
		want error
		says string
	}{
		{"encrypted BIFF5", patched([]byte{0x42, 0, 2, 0, 0xe4, 0x04}, []byte{0x2f, 0, 2, 0, 0, 0}), ErrEncrypted, "password-protected"},
		{"unknown BIFF version", patched([]byte{0x09, 0x08, 0x08, 0x00, 0x00, 0x05}, []byte{0x09, 0x08, 0x08, 0x00, 0x00, 0x07}), ErrUnsupported, "BIFF version 0x700"},
		{"BIFF2", bof(0x0009, 2, 0x0010), ErrUnsupported, "Excel 2.x worksheet (BIFF2)"},
		{"BIFF3", bof(0x0209, 0, 0x0010), ErrUnsupported, "Excel 3.0 worksheet (BIFF3)"},
		{"BIFF4", bof(0x0409, 0, 0x0010), ErrUnsupported, "Excel 4.0 worksheet (BIFF4)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := run(t, c.file, "old.xls", "", Limits{})
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("error %v, want %v saying %q", err, c.want, c.says)
			}
		})
	}
}

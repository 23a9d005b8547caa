package pdftext

import "testing"

func TestCMapToUnicode(t *testing.T) {
	c := parseCMap([]byte(`/CIDInit /ProcSet findresource begin
12 dict begin begincmap
/CMapName /Test def
2 begincodespacerange <00> <80> <8140> <FEFE> endcodespacerange
3 beginbfchar <41> <0061> <8141> <00660066> <42> /Euro endbfchar
3 beginbfrange
<50> <52> <0050>
<60> <62> [<0041> <0042> <D835DC00>]
<8200> <82FF> <4E00>
endbfrange
endcmap`))
	for _, tc := range []struct {
		code uint32
		want string
		ok   bool
	}{
		{0x41, "a", true}, {0x8141, "ff", true}, {0x42, "€", true},
		{0x50, "P", true}, {0x52, "R", true}, {0x53, "", false},
		{0x60, "A", true}, {0x62, "𝐀", true},
		{0x8200, "一", true}, {0x8201, "丁", true},
	} {
		got, ok := c.lookup(tc.code)
		if got != tc.want || ok != tc.ok {
			t.Errorf("lookup(%#x) = %q, %v; want %q, %v", tc.code, got, ok, tc.want, tc.ok)
		}
	}
	// Mixed one- and two-byte codes split by the codespace ranges.
	s := []byte{0x41, 0x81, 0x41, 0x42, 0xFF}
	var codes []uint32
	for len(s) > 0 {
		code, n := c.nextCode(s)
		codes = append(codes, code)
		s = s[n:]
	}
	want := []uint32{0x41, 0x8141, 0x42, 0xFF}
	if len(codes) != len(want) {
		t.Fatalf("codes %x, want %x", codes, want)
	}
	for i := range want {
		if codes[i] != want[i] {
			t.Fatalf("codes %x, want %x", codes, want)
		}
	}
}

func TestCMapCID(t *testing.T) {
	c := parseCMap([]byte(`begincmap /WMode 1 def
1 begincodespacerange <0000> <FFFF> endcodespacerange
1 begincidrange <0100> <01FF> 1000 endcidrange
1 begincidchar <0005> 42 endcidchar
endcmap`))
	if !c.vertical {
		t.Error("WMode 1 not vertical")
	}
	for code, want := range map[uint32]uint32{0x100: 1000, 0x1FF: 1255, 0x5: 42, 0x6: 0} {
		if got := c.cid(code); got != want {
			t.Errorf("cid(%#x) = %d, want %d", code, got, want)
		}
	}
	if id := identityCMap(false); id.cid(0x1234) != 0x1234 {
		t.Error("identity")
	}
}

func TestCMapHostile(t *testing.T) {
	// Truncated and junk CMaps give what they have, never a panic.
	for _, s := range []string{
		"", "begincodespacerange <", "1 beginbfrange <00> <FF> [", "beginbfchar <0041> endbfchar",
		"1 beginbfrange <FFFFFFFF> <00> <0041> endbfrange", "beginbfrange <00> <05> <> endbfrange",
		"begincodespacerange <0000000000> <FF> endcodespacerange",
	} {
		c := parseCMap([]byte(s))
		c.lookup(3)
		c.nextCode([]byte{1, 2, 3})
		c.cid(7)
	}
}

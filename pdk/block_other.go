//go:build !wasip1

package pdk

func blockWrite([]byte) uint64 { notInPlugin(); return 0 }
func blockRead(uint64) []byte  { notInPlugin(); return nil }

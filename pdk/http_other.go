//go:build !wasip1

package pdk

func extismHTTPRequest(uint64, uint64) uint64 { notInPlugin(); return 0 }
func extismHTTPStatusCode() int32             { notInPlugin(); return 0 }
func extismHTTPHeaders() uint64               { notInPlugin(); return 0 }

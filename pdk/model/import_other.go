//go:build !wasip1

package model

func info(uint64) uint64     { panic("model: only available inside a wasip1 plugin") }
func count(uint64) uint64    { panic("model: only available inside a wasip1 plugin") }
func complete(uint64) uint64 { panic("model: only available inside a wasip1 plugin") }
func ocr(uint64) uint64      { panic("model: only available inside a wasip1 plugin") }

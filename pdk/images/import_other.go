//go:build !wasip1

package images

func generate(uint64) uint64 { panic("images: only available inside a wasip1 plugin") }

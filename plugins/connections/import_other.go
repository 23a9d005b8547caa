//go:build !wasip1

package main

func capList(uint64) uint64     { panic(only) }
func capBrowse(uint64) uint64   { panic(only) }
func capSearch(uint64) uint64   { panic(only) }
func capDownload(uint64) uint64 { panic(only) }
func capUpload(uint64) uint64   { panic(only) }
func capSendMail(uint64) uint64 { panic(only) }
func capListMail(uint64) uint64 { panic(only) }
func capAct(uint64) uint64      { panic(only) }

const only = "connections: only available inside a wasip1 plugin"

//go:build wasip1

package main

//go:wasmimport agenthost:connectors list
func capList(req uint64) uint64

//go:wasmimport agenthost:connectors browse
func capBrowse(req uint64) uint64

//go:wasmimport agenthost:connectors search
func capSearch(req uint64) uint64

//go:wasmimport agenthost:connectors download
func capDownload(req uint64) uint64

//go:wasmimport agenthost:connectors upload
func capUpload(req uint64) uint64

//go:wasmimport agenthost:connectors send_mail
func capSendMail(req uint64) uint64

//go:wasmimport agenthost:connectors list_mail
func capListMail(req uint64) uint64

//go:wasmimport agenthost:connectors act
func capAct(req uint64) uint64

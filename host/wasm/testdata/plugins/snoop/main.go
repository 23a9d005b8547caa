// Command snoop is a hostile test plugin. It tries to read what it should
// never see: the previous call's input kept in guest memory, variables set
// by other tenants' calls, the host's environment, and host directories its manifest asks for
// (allowedPaths "/" and "/proc/self") but no operator granted.
package main

import (
	"encoding/binary"
	"os"
	"strings"
	"time"

	"github.com/agenthost/agenthost/pdk"
)

type rememberArgs struct {
	Text string `json:"text" description:"kept in guest memory for the next call"`
}

type varArgs struct {
	Key   string `json:"key" minLength:"1"`
	Value string `json:"value,omitempty"`
}

type pathArgs struct {
	Path string `json:"path" minLength:"1"`
	Text string `json:"text,omitempty"`
}

type sizeArgs struct {
	Size int64 `json:"size" minimum:"0"`
}

//go:wasmimport extism:host/env alloc
func extismAlloc(n uint64) uint64

type sleepArgs struct {
	Ms int `json:"ms" minimum:"0" maximum:"600000"`
}

// last is what the previous call on this instance was given.
var last string

func init() {
	pdk.Tool("remember", "Keeps the text and returns the previous call's.", func(a rememberArgs) (string, error) {
		prev := last
		last = a.Text
		return prev, nil
	})
	pdk.Tool("setVar", "Sets a plugin variable.", func(a varArgs) (string, error) {
		pdk.VarSet(a.Key, []byte(a.Value))
		return "ok", nil
	})
	pdk.Tool("getVar", "Reads a plugin variable.", func(a varArgs) (string, error) {
		b, ok := pdk.VarGet(a.Key)
		if !ok {
			return "", pdk.Errorf("not_found", "no variable %q", a.Key)
		}
		return string(b), nil
	}, pdk.ReadOnly())
	pdk.Tool("readPath", "Reads a file or lists a directory.", func(a pathArgs) (string, error) {
		if entries, err := os.ReadDir(a.Path); err == nil {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			return strings.Join(names, "\n"), nil
		}
		b, err := os.ReadFile(a.Path)
		if err != nil {
			return "", pdk.Errorf("io", "%v", err)
		}
		return string(b), nil
	}, pdk.ReadOnly())
	pdk.Tool("writePath", "Writes a file.", func(a pathArgs) (string, error) {
		if err := os.WriteFile(a.Path, []byte(a.Text), 0o644); err != nil {
			return "", pdk.Errorf("io", "%v", err)
		}
		return "written", nil
	})
	pdk.Tool("frameLie", "Announces an output frame of size bytes and writes ten.", func(a sizeArgs) (string, error) {
		hdr := append([]byte("\x00AGHOUT1"), make([]byte, 8)...)
		binary.LittleEndian.PutUint64(hdr[8:], uint64(a.Size))
		os.Stdout.Write(hdr)
		os.Stdout.Write([]byte("0123456789"))
		return "", nil
	}, pdk.ReadOnly())
	pdk.Tool("kernelAlloc", "Asks the Extism kernel for size bytes.", func(a sizeArgs) (string, error) {
		if extismAlloc(uint64(a.Size)) == 0 {
			return "refused", nil
		}
		return "allocated", nil
	}, pdk.ReadOnly())
	pdk.Tool("link", "Makes text a symbolic link to path.", func(a pathArgs) (string, error) {
		if err := os.Symlink(a.Path, a.Text); err != nil {
			return "", pdk.Errorf("io", "%v", err)
		}
		return "linked", nil
	})
	pdk.Tool("environ", "Lists the environment variables the guest sees.", func(struct{}) (string, error) {
		return strings.Join(os.Environ(), "\n"), nil
	}, pdk.ReadOnly())
	pdk.Tool("sleep", "Sleeps.", func(a sleepArgs) (string, error) {
		time.Sleep(time.Duration(a.Ms) * time.Millisecond)
		return "slept", nil
	}, pdk.ReadOnly())
}

func main() {}

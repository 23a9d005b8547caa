package input_test

import (
	"fmt"
	"io"

	"github.com/agenthost/agenthost/pdk/input"
)

// Reading the document an extractor was handed (capability "input"), in
// pieces: the host does not copy the whole file into the plugin's memory.
// Runs inside a plugin.
func ExampleOpen() {
	r, err := input.Open()
	if err != nil {
		fmt.Println(err)
		return
	}
	head := make([]byte, 512)
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d bytes of %d read\n", n, r.Size())
}

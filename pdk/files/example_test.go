package files_test

import (
	"fmt"

	"github.com/agenthost/agenthost/pdk/files"
)

// Reading a workspace file and appending to it (capability "files"): the
// write names the version it read, so a change made meanwhile by someone
// else is refused instead of overwritten. Runs inside a plugin.
func ExampleAppend() {
	f, err := files.Read("notes.txt", 1<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := files.Append(f.FileID, []byte("\n- called Ada back"), f.Version); err != nil {
		fmt.Println(err)
	}
}

package model_test

import (
	"fmt"

	"github.com/agenthost/agenthost/pdk/model"
)

// A completion by the workspace's model (capability "model"), billed to
// the caller's budget like the agent's own calls. Runs inside a plugin.
func ExampleComplete() {
	resp, err := model.Complete(model.Request{
		Messages:  []model.Message{{Role: "user", Content: "Summarise in one line: the pier opens at nine."}},
		MaxTokens: 60,
		Purpose:   "summary",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content, resp.CostCHF)
}

// Package agentcontext builds the context of an agent's round from the
// knowledge store (docs/agent.md, docs/knowledge.md): it retrieves the hits
// of the caller's scope, reads the workflow's memory, and assembles the
// parts (retrieved chunks, memory, the running summary) by priority into the
// room the model's window leaves, with references the answer can cite. A
// store that does not answer in time degrades the round, never fails it.
package agentcontext

package filetransfer

// Kept counts the sessions kept for reuse.
func (h *Capability) Kept() int { return h.pool().size() }

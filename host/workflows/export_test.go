package workflows

// Followed is how many workflows the broker follows (has subscribers of).
func (b *Broker) Followed() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.topics)
}

// Polling reports whether the shared fallback ticker runs.
func (b *Broker) Polling() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.polling
}

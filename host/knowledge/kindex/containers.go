package kindex

import (
	"github.com/agenthost/agenthost/pdk/knowledge/wire"
)

// ContainerEntry is one member of a container file, its full container
// path, its bytes' sha256 and where it stands; knowledge.index and
// extract_item answer with it, so it is declared with them (wire.Entry).
type ContainerEntry = wire.Entry

package store_test

import (
	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/background"
	"github.com/agenthost/agenthost/host/billing"
	"github.com/agenthost/agenthost/host/connections"
	"github.com/agenthost/agenthost/host/datasources"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/indexing"
	"github.com/agenthost/agenthost/host/knowledge/ingest"
	"github.com/agenthost/agenthost/host/knowledge/memory"
	"github.com/agenthost/agenthost/host/knowledge/ocr"
	"github.com/agenthost/agenthost/host/knowledge/ondemand"
	"github.com/agenthost/agenthost/host/knowledge/search"
	"github.com/agenthost/agenthost/host/mcpclient"
	"github.com/agenthost/agenthost/host/mcpserver"
	"github.com/agenthost/agenthost/host/notifications"
	"github.com/agenthost/agenthost/host/passkey"
	"github.com/agenthost/agenthost/host/rounds"
	"github.com/agenthost/agenthost/host/scim"
	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/sweep"
	"github.com/agenthost/agenthost/host/workflows"
)

// The store fulfils the interfaces each domain declares for what it needs
// of the database (one per concern, declared where it is used, as river's
// driver interface is). The store imports none of those domains, so the
// checks live here, beside it: a method changed on one side fails to
// compile.
var (
	_ audit.Store            = (*store.DB)(nil)
	_ background.Store       = (*store.DB)(nil)
	_ billing.Store          = (*store.DB)(nil)
	_ connections.Store      = (*store.DB)(nil)
	_ datasources.Store      = (*store.DB)(nil)
	_ files.Store            = (*store.DB)(nil)
	_ indexing.EntryStore    = (*store.DB)(nil)
	_ ingest.BackfillStore   = (*store.DB)(nil)
	_ ingest.ContainerStore  = (*store.DB)(nil)
	_ ondemand.Store         = (*store.DB)(nil)
	_ ingest.Store           = (*store.DB)(nil)
	_ memory.Store           = (*store.DB)(nil)
	_ ocr.Store              = (*store.DB)(nil)
	_ search.Store           = (*store.DB)(nil)
	_ mcpclient.Store        = (*store.DB)(nil)
	_ mcpserver.SessionStore = (*store.DB)(nil)
	_ notifications.Store    = (*store.DB)(nil)
	_ passkey.Store          = (*store.DB)(nil)
	_ scim.Store             = (*store.DB)(nil)
	_ signin.InvitationStore = (*store.DB)(nil)
	_ signin.Store           = (*store.DB)(nil)
	_ sweep.Store            = (*store.DB)(nil)
	_ workflows.Store        = (*store.DB)(nil)
	_ workflows.EventSource  = (*store.DB)(nil)
	_ workflows.Announcer    = (*store.DB)(nil)
	_ rounds.ModelStore      = (*store.DB)(nil)
	_ rounds.PreferenceStore = (*store.DB)(nil)
	_ rounds.SettingsStore   = (*store.DB)(nil)
)

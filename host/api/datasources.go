package api

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/datasources"
	"github.com/agenthost/agenthost/host/tenancy"
)

// DataSources is what the API needs of datasources.Service: the caller's
// own data sources, and their syncs.
type DataSources interface {
	Create(ctx context.Context, p tenancy.Principal, n datasources.NewDataSource) (datasources.DataSource, error)
	List(ctx context.Context, p tenancy.Principal, workspaceID string) ([]datasources.DataSource, error)
	Get(ctx context.Context, p tenancy.Principal, id string) (datasources.DataSource, error)
	Delete(ctx context.Context, p tenancy.Principal, id string) error
	SyncNow(ctx context.Context, p tenancy.Principal, id string) (datasources.DataSource, error)
}

// dataSourceSync is a data source's sync status (schema DataSourceSync).
type dataSourceSync struct {
	SyncState         string     `json:"syncState"`
	StateAt           time.Time  `json:"stateAt"`
	LastSynced        *time.Time `json:"lastSynced,omitempty"`
	LastError         string     `json:"lastError,omitempty"`
	LastSummary       string     `json:"lastSummary,omitempty"`
	NextSync          *time.Time `json:"nextSync,omitempty"`
	ConnectionRevoked bool       `json:"connectionRevoked"`
	FolderID          string     `json:"folderId,omitempty"`
}

// dataSourceJSON is a data source as the API answers it (schema DataSource).
type dataSourceJSON struct {
	ID              string `json:"id"`
	WorkspaceID     string `json:"workspaceId"`
	ConnectionID    string `json:"connectionId"`
	Provider        string `json:"provider"`
	Service         string `json:"service"`
	Path            string `json:"path"`
	Label           string `json:"label"`
	SourceType      string `json:"sourceType,omitempty"`
	AutoSync        bool   `json:"autoSync"`
	IntervalSeconds int64  `json:"intervalSeconds"`
	dataSourceSync
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func syncOf(d datasources.DataSource) dataSourceSync {
	return dataSourceSync{SyncState: string(d.State), StateAt: d.StateAt, LastSynced: d.LastSynced, LastError: d.LastError,
		LastSummary: d.LastSummary, NextSync: d.NextSync, ConnectionRevoked: d.ConnectionRevoked, FolderID: d.FolderID}
}

func dataSourceOf(d datasources.DataSource) dataSourceJSON {
	return dataSourceJSON{ID: d.ID, WorkspaceID: d.WorkspaceID, ConnectionID: d.ConnectionID, Provider: d.Provider, Service: d.Service,
		Path: d.Path, Label: d.Label, SourceType: d.SourceType, AutoSync: d.AutoSync, IntervalSeconds: int64(d.Interval / time.Second),
		dataSourceSync: syncOf(d), CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

func handleListDataSources(s DataSources) fiber.Handler {
	return func(c *fiber.Ctx) error {
		l, err := s.List(c.UserContext(), principal(c), c.Query("workspace"))
		if err != nil {
			return err
		}
		out := make([]dataSourceJSON, 0, len(l))
		for _, d := range l {
			out = append(out, dataSourceOf(d))
		}
		return c.JSON(out)
	}
}

func handleCreateDataSource(s DataSources) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r datasources.NewDataSource
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		d, err := s.Create(c.UserContext(), principal(c), r)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(dataSourceOf(d))
	}
}

func handleGetDataSource(s DataSources) fiber.Handler {
	return func(c *fiber.Ctx) error {
		d, err := s.Get(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(dataSourceOf(d))
	}
}

func handleDeleteDataSource(s DataSources) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := s.Delete(c.UserContext(), principal(c), c.Params("id")); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

func handleSyncDataSource(s DataSources) fiber.Handler {
	return func(c *fiber.Ctx) error {
		d, err := s.SyncNow(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusAccepted).JSON(dataSourceOf(d))
	}
}

func handleDataSourceSync(s DataSources) fiber.Handler {
	return func(c *fiber.Ctx) error {
		d, err := s.Get(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(syncOf(d))
	}
}

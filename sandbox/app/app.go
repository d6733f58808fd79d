// Package app builds a whole sandbox from its configuration: the one place
// where the store, the accounts, webhook delivery and the HTTP layer are
// wired together, for cmd/sandbox and for tests alike.
package app

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/testcampaign/kit/fixtures"
	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/ratelimit"
	"github.com/testcampaign/kit/sandbox/store"
)

// Config is everything a sandbox is built from. Zero values take the
// defaults of a sandbox started without flags.
type Config struct {
	// Fixtures seeds every account; the embedded fixtures if nil.
	Fixtures fs.FS
	// FrozenAt, if not zero, freezes every account's clock there.
	FrozenAt time.Time
	// Limits are the /v1 rate limits per key.
	Limits ratelimit.Limits
	// ControlLimits are the /_sandbox rate limits per key.
	ControlLimits ratelimit.Limits
	// StoreLimits bound what one account holds.
	StoreLimits store.Limits
	// AccountTTL drops accounts idle for longer.
	AccountTTL time.Duration
	// MaxAccounts caps the accounts held; the least recently used go first.
	MaxAccounts int
	// MemoryBudget bounds the estimated bytes of every account's records
	// and events together; the least recently used accounts go first.
	MemoryBudget int64
	// Webhooks configures delivery; see the webhook package.
	Webhooks WebhookConfig
	Logger   *slog.Logger
	// WrapStore, if set, stands between each account and its database.
	WrapStore func(sandbox.Store) sandbox.Store
	// Clients bounds what one client address may do, whatever its keys;
	// unlike the other fields, zero turns a bound off (cmd/sandbox's flags
	// default to httpapi.DefaultClientLimits).
	Clients httpapi.ClientLimits
	// ClientClock counts the client budgets' minutes; time.Now if nil.
	ClientClock func() time.Time
	// WriteTimeout bounds the writing of each response; none if zero.
	WriteTimeout time.Duration
	// ParkConn is told of connections waiting in injected faults; see
	// httpapi.Options.
	ParkConn func(context.Context) (resume func())
	// CORS lets browser scripts of other origins call the sandbox; none
	// may if zero.
	CORS httpapi.CORS
}

// Defaults of a sandbox started without flags.
const (
	DefaultAccountTTL = 24 * time.Hour
	// DefaultMaxAccounts fits in about 1 GB with each account holding a
	// few hundred records of its own.
	DefaultMaxAccounts = 10_000
	// DefaultMemoryBudget holds a million campaigns and a million bugs in
	// one account (about 1 GiB as estimated) beside many small accounts,
	// and keeps the process, with the garbage collector's headroom, within
	// a few GiB.
	DefaultMemoryBudget = 3 << 30
)

// App is a built sandbox.
type App struct {
	Handler  http.Handler
	Accounts *accounts.Registry
	server   *httpapi.Server
	close    func()
}

// New builds a sandbox. Close releases it.
func New(cfg Config) (*App, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	fixtureFS := cfg.Fixtures
	if fixtureFS == nil {
		fixtureFS = fixtures.Default()
	}
	seed, err := fixtures.Load(fixtureFS)
	if err != nil {
		return nil, err
	}
	template, err := store.NewTemplate(seed, cfg.StoreLimits.Or(store.DefaultLimits))
	if err != nil {
		return nil, err
	}
	outboxes, identity, closeWebhooks := startWebhooks(cfg.Webhooks, cfg.Logger)
	registry, err := accounts.New(accounts.Config{
		Template:      template,
		Limits:        cfg.Limits.Or(ratelimit.DefaultLimits),
		ControlLimits: cfg.ControlLimits.Or(ratelimit.DefaultControlLimits),
		FrozenAt:      cfg.FrozenAt,
		TTL:           cmp.Or(cfg.AccountTTL, DefaultAccountTTL),
		Max:           cmp.Or(cfg.MaxAccounts, DefaultMaxAccounts),
		MemoryBudget:  cmp.Or(cfg.MemoryBudget, DefaultMemoryBudget),
		NewOutbox:     outboxes,
		Identity:      identity,
		WrapStore:     cfg.WrapStore,
		Logger:        cfg.Logger,
	})
	if err != nil {
		closeWebhooks()
		return nil, fmt.Errorf("accounts: %w", err)
	}
	handler := httpapi.NewServer(httpapi.Options{
		Accounts: registry, Logger: cfg.Logger,
		Clients: cfg.Clients, ClientClock: cfg.ClientClock, WriteTimeout: cfg.WriteTimeout, ParkConn: cfg.ParkConn,
		CORS: cfg.CORS,
	})
	return &App{Handler: handler, Accounts: registry, server: handler, close: func() {
		registry.Close()
		closeWebhooks()
	}}, nil
}

// BeginShutdown ends every injected delay and trickle at once, so that the
// requests in flight finish within a graceful shutdown's grace period.
func (a *App) BeginShutdown() {
	a.server.EndDelays()
}

// Close cancels every pending webhook delivery and drops every account.
func (a *App) Close() {
	a.close()
}

// Package sandboxtest starts an in-process sandbox for tests, the way
// net/http/httptest starts a server.
package sandboxtest

import (
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/testcampaign/kit/openapi/openapitest"
	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
	"github.com/testcampaign/kit/sandbox/app"
	"github.com/testcampaign/kit/sandbox/ratelimit"
)

// Options configure a test sandbox; zero values take the defaults of a
// sandbox started without flags.
type Options struct {
	// MinuteLimit, HourLimit and DayLimit replace the default rate limits
	// where they are not zero.
	MinuteLimit, HourLimit, DayLimit int
	// ControlMinuteLimit replaces the controls' per-minute budget.
	ControlMinuteLimit int
	// Now, if not zero, freezes every account's clock there.
	Now time.Time
	// WebhookRetry, if not zero, replaces the 1s wait before a webhook
	// delivery's second attempt, so retries can be tested quickly.
	WebhookRetry time.Duration
	// WebhookDenyPrivate refuses loopback and private receivers, as
	// -webhook-deny-private does. Without it a test sandbox delivers only to
	// loopback receivers.
	WebhookDenyPrivate bool
	// Secret, if set, is the server secret webhook secrets and Webhook-Ids
	// are derived with, as -secret sets it; by default each sandbox has a
	// random one, so tests that keep them in golden files set it.
	Secret string
	// Fixtures, if set, seeds accounts instead of the embedded fixtures, as
	// the -fixtures flag does.
	Fixtures fs.FS
	// MaxAccounts and AccountTTL replace the account bounds.
	MaxAccounts int
	AccountTTL  time.Duration
	// Logger, if set, receives the request log; by default it is dropped.
	Logger *slog.Logger
	// WrapStore, if set, stands between each account and its database, so
	// a test can make the store misbehave.
	WrapStore func(sandbox.Store) sandbox.Store
}

// Sandbox is a whole sandbox built for a test.
type Sandbox struct {
	Handler  http.Handler
	Accounts *accounts.Registry
}

// NewHandler returns a whole sandbox. It fails the test if the sandbox
// cannot be built.
func NewHandler(tb testing.TB, opts Options) http.Handler {
	tb.Helper()
	return New(tb, opts).Handler
}

// New is NewHandler for tests that also need the accounts.
func New(tb testing.TB, opts Options) *Sandbox {
	tb.Helper()
	built, err := app.New(app.Config{
		Fixtures:      opts.Fixtures,
		FrozenAt:      opts.Now,
		Limits:        ratelimit.Limits{Minute: opts.MinuteLimit, Hour: opts.HourLimit, Day: opts.DayLimit},
		ControlLimits: ratelimit.PerMinute(opts.ControlMinuteLimit),
		AccountTTL:    opts.AccountTTL,
		MaxAccounts:   opts.MaxAccounts,
		// Whatever URLs a test registers, its deliveries never leave
		// this machine: either only loopback is allowed, or nothing local,
		// and then a test registers only loopback URLs.
		Webhooks: app.WebhookConfig{
			FirstRetry:  opts.WebhookRetry,
			DenyPrivate: opts.WebhookDenyPrivate, LoopbackOnly: !opts.WebhookDenyPrivate,
			Secret: opts.Secret,
		},
		Logger:    opts.Logger,
		WrapStore: opts.WrapStore,
	})
	if err != nil {
		tb.Fatalf("build sandbox: %v", err)
	}
	tb.Cleanup(built.Close)
	// Every exchange of every test is checked against the OpenAPI document.
	return &Sandbox{Handler: openapitest.Handler(tb, built.Handler), Accounts: built.Accounts}
}

// NewServer serves NewHandler on a local port until the test ends.
func NewServer(tb testing.TB, opts Options) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(NewHandler(tb, opts))
	tb.Cleanup(srv.Close)
	return srv
}

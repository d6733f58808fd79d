// Package sandboxtest starts an in-process sandbox for tests, the way
// net/http/httptest starts a server.
package sandboxtest

import (
	"cmp"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/testcampaign/kit/fixtures"
	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/ratelimit"
	"github.com/testcampaign/kit/sandbox/store"
	"github.com/testcampaign/kit/sandbox/webhook"
)

// Options configure a test sandbox.
type Options struct {
	// MinuteLimit, HourLimit and DayLimit replace the default rate limits
	// where they are not zero.
	MinuteLimit, HourLimit, DayLimit int
	// Now, if not zero, freezes the clock there.
	Now time.Time
	// WebhookRetry, if not zero, replaces the 1s wait before a webhook
	// delivery's second attempt, so retries can be tested quickly.
	WebhookRetry time.Duration
	// Fixtures, if set, seeds accounts instead of the embedded fixtures, as
	// the -fixtures flag does.
	Fixtures fs.FS
	// Logger, if set, receives the request log; by default it is dropped.
	Logger *slog.Logger
	// WrapStore, if set, stands between the server and the store, so a test
	// can make the store misbehave.
	WrapStore func(sandbox.Store) sandbox.Store
}

// Sandbox is a whole sandbox built for a test.
type Sandbox struct {
	Handler http.Handler
	Store   *store.Store
	// Clock is the frozen clock, nil unless Options.Now was set.
	Clock *sandbox.FrozenClock
}

// NewHandler returns a whole sandbox, seeded with the default fixtures, on a
// fresh store. It fails the test if the sandbox cannot be built.
func NewHandler(tb testing.TB, opts Options) http.Handler {
	tb.Helper()
	return New(tb, opts).Handler
}

// New is NewHandler for tests that also need the store or the clock.
func New(tb testing.TB, opts Options) *Sandbox {
	tb.Helper()
	fixtureFS := opts.Fixtures
	if fixtureFS == nil {
		fixtureFS = fixtures.Default()
	}
	seed, err := fixtures.Load(fixtureFS)
	if err != nil {
		tb.Fatalf("load fixtures: %v", err)
	}
	var clock sandbox.Clock = sandbox.SystemClock{}
	var frozen *sandbox.FrozenClock
	if !opts.Now.IsZero() {
		frozen = sandbox.NewFrozenClock(opts.Now)
		clock = frozen
	}
	logger := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	var dispatcher *webhook.Dispatcher
	st, err := store.New(clock, seed, store.WithEventListener(func(e sandbox.Event) { dispatcher.Notify(e) }))
	if err != nil {
		tb.Fatalf("build store: %v", err)
	}
	dispatcher = webhook.Start(webhook.Options{Store: st, Clock: clock, Logger: logger, FirstRetry: opts.WebhookRetry})
	tb.Cleanup(dispatcher.Close)
	limits := ratelimit.Limits{
		Minute: cmp.Or(opts.MinuteLimit, ratelimit.DefaultLimits.Minute),
		Hour:   cmp.Or(opts.HourLimit, ratelimit.DefaultLimits.Hour),
		Day:    cmp.Or(opts.DayLimit, ratelimit.DefaultLimits.Day),
	}
	var served sandbox.Store = st
	if opts.WrapStore != nil {
		served = opts.WrapStore(st)
	}
	handler := httpapi.NewServer(httpapi.Options{
		Store: served, Clock: clock, Limiter: ratelimit.New(limits), FrozenClock: frozen, Logger: logger,
	})
	return &Sandbox{Handler: handler, Store: st, Clock: frozen}
}

// NewServer serves NewHandler on a local port until the test ends.
func NewServer(tb testing.TB, opts Options) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(NewHandler(tb, opts))
	tb.Cleanup(srv.Close)
	return srv
}

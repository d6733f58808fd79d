// Package sandboxtest starts an in-process sandbox for tests, the way
// net/http/httptest starts a server: the whole sandbox, as cmd/sandbox
// assembles it, on a local port, gone when the test ends.
//
//	func TestCheckout(t *testing.T) {
//		srv := sandboxtest.NewServer(t, sandboxtest.Options{})
//		api := checkout.NewClient(srv.URL, "svc_test_checkout")
//		…
//	}
//
// Options set what the sandbox's flags set: a frozen clock, rate limits,
// fixtures, a server secret. Every exchange with the sandbox is also checked
// against the OpenAPI document, and one that breaks it fails the test;
// request headers the document does not declare pass unless
// Options.StrictRequestHeaders says otherwise.
// Start serves a sandbox where there is no test to own it, as in TestMain.
// Controls plans faults, reads the request journal, moves the clock, resets
// the account and waits for webhook deliveries, on any sandbox.
package sandboxtest

import (
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/openapi"
	"github.com/testcampaign/kit/openapi/openapitest"
	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
	"github.com/testcampaign/kit/sandbox/app"
	"github.com/testcampaign/kit/sandbox/clientverdict"
	"github.com/testcampaign/kit/sandbox/httpapi"
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
	// CORS lets scripts of its origins call the sandbox from a browser, as
	// -cors-origins does; the zero value lets none in. With origins listed,
	// a request carrying an Origin is not checked against the OpenAPI
	// document, which describes no Access-Control-* header or preflight.
	CORS httpapi.CORS
	// Clients bounds each client address; zero bounds nothing. Its minutes
	// are counted at Now when that is set, so they never roll over.
	Clients httpapi.ClientLimits
	// StrictRequestHeaders also fails the test on a request header the
	// OpenAPI document does not declare. Without it, the headers a client
	// adds of its own (Idempotency-Key, traceparent, a retry counter) pass,
	// and only what the sandbox answers is held to the document strictly.
	StrictRequestHeaders bool
	// IgnoredRequestHeaders are headers of the client's own that
	// StrictRequestHeaders lets pass undeclared, as the hint of its
	// failures says (StrictIgnoredHeaders, in the validator's words).
	IgnoredRequestHeaders []string
}

// Sandbox is a whole sandbox built for a test.
type Sandbox struct {
	Handler  http.Handler
	Accounts *accounts.Registry
	// EndDelays ends every injected delay and trickle at once, as shutdown
	// does, so that a test can hold a request in its delay for as long as
	// it needs and then let it be answered.
	EndDelays func()
}

// NewHandler returns a whole sandbox. It fails the test if the sandbox
// cannot be built.
func NewHandler(tb testing.TB, opts Options) http.Handler {
	tb.Helper()
	return New(tb, opts).Handler
}

// New is NewHandler for tests that also need the accounts or the end of
// delays.
func New(tb testing.TB, opts Options) *Sandbox {
	tb.Helper()
	built, err := app.New(appConfig(opts))
	if err != nil {
		tb.Fatalf("build sandbox: %v", err)
	}
	tb.Cleanup(built.Close)
	// Every exchange of every test is checked against the OpenAPI document,
	// but for a browser's: the document describes the API, not the
	// Access-Control-* headers and preflights of -cors-origins (WEB-2,
	// WEB-3).
	checked := openapitest.Handler(tb, built.Handler, checkOptions(opts)...)
	h := checked
	if len(opts.CORS.Origins) > 0 {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Origin") != "" {
				built.Handler.ServeHTTP(w, r)
				return
			}
			checked.ServeHTTP(w, r)
		})
	}
	return &Sandbox{Handler: h, Accounts: built.Accounts, EndDelays: built.BeginShutdown}
}

// checkOptions are the options of the OpenAPI check beyond openapi.Strict.
func checkOptions(opts Options) []openapi.Option {
	if opts.StrictRequestHeaders {
		return []openapi.Option{openapi.StrictRequestHeaders(), openapi.IgnoreHeaders(opts.IgnoredRequestHeaders...)}
	}
	return nil
}

// appConfig is the configuration of a sandbox with these options.
func appConfig(opts Options) app.Config {
	cfg := app.Config{
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
		Clients:   opts.Clients,
		CORS:      opts.CORS,
	}
	if !opts.Now.IsZero() {
		cfg.ClientClock = func() time.Time { return opts.Now }
	}
	return cfg
}

// NewServer serves NewHandler on a local port until the test ends.
func NewServer(tb testing.TB, opts Options) *httptest.Server {
	tb.Helper()
	srv := newServer(NewHandler(tb, opts))
	tb.Cleanup(srv.Close)
	return srv
}

// newServer serves h as the sandbox binary does, with its bound on request
// headers.
func newServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.MaxHeaderBytes = httpapi.MaxHeaderBytes
	// The verdict tells a request sent alongside another from one sent
	// after it by when its connection opened.
	srv.Config.ConnContext = clientverdict.ConnContext
	srv.Start()
	return srv
}

// Server is a sandbox on a local port that no single test owns: one that
// TestMain starts for every test of a package, or an example's.
type Server struct {
	*httptest.Server
	closeApp func()

	mu    sync.Mutex
	drift []string
}

// Start serves a whole sandbox on a local port until Close, for where there
// is no testing.TB to clean up after it:
//
//	func TestMain(m *testing.M) {
//		srv, err := sandboxtest.Start(sandboxtest.Options{})
//		if err != nil {
//			log.Fatal(err)
//		}
//		baseURL = srv.URL
//		code := m.Run()
//		if err := srv.Close(); err != nil {
//			log.Fatal(err)
//		}
//		os.Exit(code)
//	}
//
// Its exchanges are checked against the OpenAPI document as NewServer's
// are; Close reports those that broke it.
func Start(opts Options) (*Server, error) {
	built, err := app.New(appConfig(opts))
	if err != nil {
		return nil, fmt.Errorf("build sandbox: %w", err)
	}
	validator, err := openapi.Default(append([]openapi.Option{openapi.Strict()}, checkOptions(opts)...)...)
	if err != nil {
		built.Close()
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	s := &Server{closeApp: built.Close}
	s.Server = newServer(openapitest.Checking(validator, built.Handler, func(r *http.Request, status int, v openapi.Violation) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.drift = append(s.drift, fmt.Sprintf("%s %s answered %d: %s", r.Method, r.URL.RequestURI(), status, v))
	}))
	return s, nil
}

// Close stops the sandbox, and returns an error listing every exchange that
// broke the OpenAPI document, if one did.
func (s *Server) Close() error {
	s.Server.Close()
	s.closeApp()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.drift) > 0 {
		return fmt.Errorf("OpenAPI drift:\n%s", strings.Join(s.drift, "\n"))
	}
	return nil
}

// Command sandbox serves the Test-Campaign Service API v1 locally for
// svc_test_ keys, with every account in memory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/testcampaign/kit/fixtures"
	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/ratelimit"
	"github.com/testcampaign/kit/sandbox/store"
	"github.com/testcampaign/kit/sandbox/webhook"
)

type config struct {
	addr        string
	fixturesDir string
	frozenClock string
	limits      ratelimit.Limits
	logFormat   string
	// webhookAttempts and webhookFirstRetry shape delivery retries.
	webhookAttempts   int
	webhookFirstRetry time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	fset := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fset.StringVar(&cfg.fixturesDir, "fixtures", "", "directory with testers.json, campaigns.json and bugs.json to seed accounts with (default: the embedded fixtures)")
	fset.StringVar(&cfg.frozenClock, "frozen-clock", "", "freeze the clock at this RFC 3339 time, so the same requests give byte-identical responses")
	fset.IntVar(&cfg.limits.Minute, "rate-limit-minute", ratelimit.DefaultLimits.Minute, "requests per key per UTC minute")
	fset.IntVar(&cfg.limits.Hour, "rate-limit-hour", ratelimit.DefaultLimits.Hour, "requests per key per UTC hour")
	fset.IntVar(&cfg.limits.Day, "rate-limit-day", ratelimit.DefaultLimits.Day, "requests per key per UTC day")
	fset.StringVar(&cfg.logFormat, "log-format", "text", "request log format: text or json")
	fset.IntVar(&cfg.webhookAttempts, "webhook-attempts", 5, "tries per webhook delivery before giving up")
	fset.DurationVar(&cfg.webhookFirstRetry, "webhook-first-retry", time.Second, "wait before a delivery's second try; each later wait doubles")
	if err := fset.Parse(args); err != nil {
		return cfg, err
	}
	if fset.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %v", fset.Args())
	}
	if cfg.limits.Minute < 1 || cfg.limits.Hour < 1 || cfg.limits.Day < 1 {
		return cfg, errors.New("rate limits must be at least 1")
	}
	if cfg.webhookAttempts < 1 || cfg.webhookFirstRetry <= 0 {
		return cfg, errors.New("-webhook-attempts must be at least 1 and -webhook-first-retry positive")
	}
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		return cfg, fmt.Errorf("-log-format must be text or json, not %q", cfg.logFormat)
	}
	return cfg, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done, then lets requests in flight finish.
func run(ctx context.Context, cfg config, logOutput io.Writer) error {
	var logger *slog.Logger
	if cfg.logFormat == "json" {
		logger = slog.New(slog.NewJSONHandler(logOutput, nil))
	} else {
		logger = slog.New(slog.NewTextHandler(logOutput, nil))
	}

	var fixtureFS fs.FS = fixtures.Default()
	if cfg.fixturesDir != "" {
		fixtureFS = os.DirFS(cfg.fixturesDir)
	}
	seed, err := fixtures.Load(fixtureFS)
	if err != nil {
		return err
	}

	var clock sandbox.Clock = sandbox.SystemClock{}
	var frozen *sandbox.FrozenClock
	if cfg.frozenClock != "" {
		at, err := time.Parse(time.RFC3339, cfg.frozenClock)
		if err != nil {
			return fmt.Errorf("-frozen-clock: %w", err)
		}
		frozen = sandbox.NewFrozenClock(at)
		clock = frozen
	}

	// The store announces events after commit; the dispatcher, built on
	// the store, delivers them. The listener reads dispatcher only once
	// requests arrive, after both exist.
	var dispatcher *webhook.Dispatcher
	st, err := store.New(clock, seed, store.WithEventListener(func(e sandbox.Event) { dispatcher.Notify(e) }))
	if err != nil {
		return err
	}
	dispatcher = webhook.Start(webhook.Options{
		Store: st, Clock: clock, Logger: logger, MaxAttempts: cfg.webhookAttempts, FirstRetry: cfg.webhookFirstRetry,
	})
	defer dispatcher.Close()
	handler := httpapi.NewServer(httpapi.Options{
		Store: st, Clock: clock, Limiter: ratelimit.New(cfg.limits), Logger: logger, FrozenClock: frozen,
	})

	listener, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Long enough for the slowest injected fault.
		WriteTimeout: sandbox.MaxFaultDelay + 30*time.Second,
		IdleTimeout:  2 * time.Minute,
		ErrorLog:     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("sandbox listening", "url", "http://"+listener.Addr().String(), "frozen_clock", cfg.frozenClock,
		"rate_limits", fmt.Sprintf("%d/min %d/h %d/day", cfg.limits.Minute, cfg.limits.Hour, cfg.limits.Day))

	served := make(chan error, 1)
	go func() { served <- srv.Serve(listener) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// Command sandbox serves the Test-Campaign Service API v1 locally for
// svc_test_ keys, with every account in memory.
package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/app"
	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/ratelimit"
	"github.com/testcampaign/kit/sandbox/store"
)

// secretEnv names the environment variable that sets the server secret: a
// command line is visible to every user of the machine, the environment is not.
const secretEnv = "SANDBOX_SECRET"

// minSecretLength keeps a server secret from being guessed, which would make
// short keys recoverable from their Webhook-Ids again.
const minSecretLength = 16

type config struct {
	addr        string
	fixturesDir string
	frozenClock string
	logFormat   string
	memoryLimit byteSize
	gcHeadroom  byteSize
	budget      byteSize
	maxConns    int
	idleTimeout time.Duration
	cpuProfile  string
	memProfile  string
	corsOrigins string
	// tlsCert and tlsKey, or tlsSelfSigned, make the sandbox serve HTTPS.
	tlsCert, tlsKey, tlsSelfSigned string
	// grace is how long requests in flight get to finish at shutdown;
	// shutdownGrace if zero.
	grace time.Duration
	// headerTimeout, if not zero, replaces readHeaderTimeout's five seconds.
	headerTimeout time.Duration
	// announce gets one line, the sandbox's base URL, once it listens.
	announce io.Writer
	app      app.Config
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{}
	a := &cfg.app
	fset := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fset.StringVar(&cfg.fixturesDir, "fixtures", "", "directory with testers.json, campaigns.json and bugs.json to seed accounts with (default: the embedded fixtures)")
	fset.StringVar(&cfg.frozenClock, "frozen-clock", "", "start every account's clock frozen at this RFC 3339 time, so the same requests give byte-identical responses")
	fset.IntVar(&a.Limits.Minute, "rate-limit-minute", ratelimit.DefaultLimits.Minute, "API requests per key per UTC minute")
	fset.IntVar(&a.Limits.Hour, "rate-limit-hour", ratelimit.DefaultLimits.Hour, "API requests per key per UTC hour")
	fset.IntVar(&a.Limits.Day, "rate-limit-day", ratelimit.DefaultLimits.Day, "API requests per key per UTC day")
	fset.IntVar(&a.ControlLimits.Minute, "control-limit-minute", ratelimit.DefaultControlLimits.Minute, "/_sandbox requests per key per UTC minute (the hour and day allow 60 and 1440 times as many)")
	fset.IntVar(&a.StoreLimits.Records, "max-records", store.DefaultLimits.Records, "campaigns, and separately bugs, one account may hold")
	fset.IntVar(&a.StoreLimits.Events, "max-events", store.DefaultLimits.Events, "most recent events each account keeps for /_sandbox/events")
	fset.DurationVar(&a.AccountTTL, "account-ttl", app.DefaultAccountTTL, "drop an account idle for this long; its key then starts afresh")
	fset.IntVar(&a.MaxAccounts, "max-accounts", app.DefaultMaxAccounts, "accounts held at once; past it the least recently used is dropped")
	cfg.budget = app.DefaultMemoryBudget
	fset.Var(&cfg.budget, "memory-budget", "estimated bytes that the records, events, planned faults, request journals and webhook deliveries of all accounts may take together; past it the least recently used accounts are dropped, and a write that still cannot fit gets 409 LIMIT_REACHED")
	cfg.gcHeadroom = defaultGCHeadroom
	fset.Var(&cfg.gcHeadroom, "gc-headroom", "let the heap grow by this much between garbage collections, at most four times what it holds, while that is less, and by its own size once it holds more, as Go's default does; 0 leaves Go's default, as does setting GOGC; unset, at most half of -memory-budget")
	fset.StringVar(&cfg.logFormat, "log-format", "text", "request log format: text or json")
	fset.Var(&cfg.memoryLimit, "memory-limit", "soft memory limit, such as 1900MiB: the garbage collector works harder near it instead of letting the heap grow by -gc-headroom or double (default: GOMEMLIMIT, else none)")
	fset.IntVar(&a.Webhooks.Attempts, "webhook-attempts", 5, "tries per webhook delivery before giving up")
	fset.DurationVar(&a.Webhooks.FirstRetry, "webhook-first-retry", time.Second, "wait before a delivery's second try; each later wait doubles")
	fset.BoolVar(&a.Webhooks.DenyPrivate, "webhook-deny-private", false, "refuse webhook destinations on loopback, private and special-purpose networks and the host's own addresses too (link-local, multicast and unspecified ones always are)")
	fset.BoolVar(&a.Webhooks.LoopbackOnly, "webhook-loopback-only", false, "deliver webhooks only to receivers on this machine (loopback addresses and the name localhost), and look no name up")
	fset.StringVar(&a.Webhooks.Secret, "secret", "", "server secret (at least 16 bytes) that webhook secrets and Webhook-Ids are derived with, so that replicas and reruns agree; prefer the "+secretEnv+" environment variable, which other users cannot read (default: "+secretEnv+", else random for each start)")
	fset.IntVar(&cfg.maxConns, "max-conns", defaultMaxConns(), "open connections at once; at the cap idle keep-alive connections are closed first (default: the file-descriptor limit less a tenth, at least 128, for deliveries and files)")
	fset.DurationVar(&cfg.idleTimeout, "idle-timeout", 30*time.Second, "close a keep-alive connection idle for this long")
	fset.DurationVar(&a.WriteTimeout, "write-timeout", 10*time.Second, "drop a client that has not read its response this long after it started")
	a.Clients = httpapi.DefaultClientLimits
	fset.IntVar(&a.Clients.Requests, "client-limit-minute", a.Clients.Requests, "requests of any kind per client address per UTC minute, /healthz and 401s included; 0 for no limit")
	fset.IntVar(&a.Clients.NewAccounts, "client-new-accounts-minute", a.Clients.NewAccounts, "new accounts (keys not held) per client address per UTC minute; 0 for no limit")
	fset.BoolVar(&a.Clients.TrustForwardedFor, "trust-forwarded-for", false, "count each client by the last X-Forwarded-For address, which a proxy in front (such as deploy/nginx.conf) appends; only behind such a proxy")
	fset.StringVar(&cfg.corsOrigins, "cors-origins", "", "let scripts of these origins call the sandbox from a browser: a comma-separated list such as http://localhost:3000,http://localhost:8081, or * for any; preflights are answered before keys, limits and faults (default: none, and no Access-Control-* header)")
	fset.StringVar(&cfg.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain), and -tls-key")
	fset.StringVar(&cfg.tlsKey, "tls-key", "", "the PEM private key of -tls-cert")
	fset.StringVar(&cfg.tlsSelfSigned, "tls-self-signed", "", "serve HTTPS with a certificate for the listen address and localhost, signed by a CA made at start, whose certificate is written to DIR/"+caFile+" for clients to trust")
	fset.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile to this file until the sandbox stops, for `go tool pprof`")
	fset.StringVar(&cfg.memProfile, "memprofile", "", "write the heap profile, in text, with the runtime's memory statistics (the count of allocations among them), to this file when the sandbox stops, for `go tool pprof`")
	if err := fset.Parse(args); err != nil {
		return cfg, err
	}
	headroomSet := false
	fset.Visit(func(f *flag.Flag) { headroomSet = headroomSet || f.Name == "gc-headroom" })
	if !headroomSet {
		// An operator who bounds the accounts' memory tightly wants a
		// small process: the garbage between collections is bounded by
		// the budget too.
		cfg.gcHeadroom = min(cfg.gcHeadroom, cfg.budget/2)
	}
	if fset.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %v", fset.Args())
	}
	if a.Limits.Minute < 1 || a.Limits.Hour < 1 || a.Limits.Day < 1 || a.ControlLimits.Minute < 1 {
		return cfg, errors.New("rate limits must be at least 1")
	}
	a.ControlLimits = ratelimit.PerMinute(a.ControlLimits.Minute)
	if a.StoreLimits.Records < 1 || a.StoreLimits.Events < 1 || a.MaxAccounts < 1 || a.AccountTTL <= 0 || cfg.budget <= 0 {
		return cfg, errors.New("-max-records, -max-events and -max-accounts must be at least 1, and -account-ttl and -memory-budget positive")
	}
	a.MemoryBudget = int64(cfg.budget)
	if a.Webhooks.DenyPrivate && a.Webhooks.LoopbackOnly {
		return cfg, errors.New("-webhook-deny-private and -webhook-loopback-only together would refuse every destination")
	}
	if a.Webhooks.Secret == "" {
		a.Webhooks.Secret = os.Getenv(secretEnv)
	}
	if a.Webhooks.Secret != "" && len(a.Webhooks.Secret) < minSecretLength {
		return cfg, fmt.Errorf("-secret or %s must be at least %d bytes", secretEnv, minSecretLength)
	}
	if a.Webhooks.Attempts < 1 || a.Webhooks.FirstRetry <= 0 {
		return cfg, errors.New("-webhook-attempts must be at least 1 and -webhook-first-retry positive")
	}
	if cfg.maxConns < 1 || cfg.idleTimeout <= 0 || a.WriteTimeout <= 0 || a.Clients.Requests < 0 || a.Clients.NewAccounts < 0 {
		return cfg, errors.New("-max-conns must be at least 1, -idle-timeout and -write-timeout positive, and the client limits 0 or more")
	}
	cors, err := httpapi.ParseCORSOrigins(cfg.corsOrigins)
	if err != nil {
		return cfg, fmt.Errorf("-cors-origins: %w", err)
	}
	a.CORS = cors
	if (cfg.tlsCert == "") != (cfg.tlsKey == "") {
		return cfg, errors.New("-tls-cert and -tls-key go together")
	}
	if cfg.tlsCert != "" && cfg.tlsSelfSigned != "" {
		return cfg, errors.New("-tls-self-signed makes its own certificate; give it or -tls-cert and -tls-key, not both")
	}
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		return cfg, fmt.Errorf("-log-format must be text or json, not %q", cfg.logFormat)
	}
	return cfg, cfg.resolve()
}

// resolve turns the flags that name things into what they name.
func (cfg *config) resolve() error {
	if cfg.frozenClock != "" {
		at, err := time.Parse(time.RFC3339, cfg.frozenClock)
		if err != nil {
			return fmt.Errorf("-frozen-clock: %w", err)
		}
		cfg.app.FrozenAt = at
	}
	if cfg.fixturesDir != "" {
		cfg.app.Fixtures = os.DirFS(cfg.fixturesDir)
	}
	return nil
}

func main() {
	if code, ran := subcommand(os.Args[1:], os.Stdout, os.Stderr); ran {
		os.Exit(code)
	}
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
	cfg.announce = os.Stdout
	if err := run(ctx, cfg, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
}

// Bounds of what the server reads from a client.
const (
	readTimeout = 30 * time.Second
	// shutdownGrace is how long requests in flight get to finish.
	shutdownGrace = 10 * time.Second
)

// baseURLs are the URL a client on this machine uses, and, for a sandbox
// listening on every address (0.0.0.0, ::), the URLs of the machine's own
// addresses, for other devices on its networks (WEB-8).
func baseURLs(scheme string, addr net.Addr) (local string, others []string) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return scheme + "://" + addr.String(), nil
	}
	port := strconv.Itoa(tcp.Port)
	for _, ip := range machineAddresses() {
		others = append(others, scheme+"://"+net.JoinHostPort(ip.String(), port))
	}
	return scheme + "://" + net.JoinHostPort("127.0.0.1", port), others
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeHeapProfile writes the heap profile in its text form, whose end
// holds runtime.MemStats: loadbench instructions reads the count of
// allocations there.
func writeHeapProfile(f *os.File, logOutput io.Writer) {
	err := pprof.Lookup("heap").WriteTo(f, 1)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		fmt.Fprintln(logOutput, "sandbox: -memprofile:", err)
	}
}

// listenerStack is what the server accepts connections from: the
// connection limiter over the TCP listener and, for HTTPS, TLS over the
// refusal of plain HTTP over the limiter. TLS goes over the limiter so
// that a handshake that never ends still holds a counted connection, which
// the limiter can close.
func (cfg config) listenerStack(tcp net.Listener, tlsConf *tls.Config) (served net.Listener, limiter *connLimiter) {
	limiter = newConnLimiter(tcp, cmp.Or(cfg.maxConns, defaultMaxConns()))
	if tlsConf == nil {
		return limiter, limiter
	}
	return tls.NewListener(plainHTTPRefuser{Listener: limiter, timeout: cfg.readHeaderTimeout()}, tlsConf), limiter
}

// readHeaderTimeout is how long a client has to send a request's head,
// and a TLS client its handshake first.
func (cfg config) readHeaderTimeout() time.Duration {
	return cmp.Or(cfg.headerTimeout, 5*time.Second)
}

// httpServer is the HTTP server of handler, with the sandbox's bounds and
// the connection limiter's hooks.
func (cfg config) httpServer(handler http.Handler, limiter *connLimiter, logger *slog.Logger) *http.Server {
	return &http.Server{
		ConnState:         limiter.ConnState,
		ConnContext:       limiter.ConnContext,
		Handler:           handler,
		ReadHeaderTimeout: cfg.readHeaderTimeout(),
		ReadTimeout:       readTimeout,
		MaxHeaderBytes:    httpapi.MaxHeaderBytes,
		// Long enough for the slowest injected fault, a delay and then a
		// trickle; the writing of each response has its own, shorter
		// deadline (-write-timeout), which a trickle extends by its length.
		WriteTimeout: 2*sandbox.MaxFaultDelay + readTimeout,
		IdleTimeout:  cfg.idleTimeout,
		ErrorLog:     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// run serves until ctx is done, then lets requests in flight finish.
func run(ctx context.Context, cfg config, logOutput io.Writer) error {
	flushTicker := time.NewTicker(logFlushInterval)
	defer flushTicker.Stop()
	logs := newBufferedLog(logOutput, flushTicker.C)
	// Deferred first, so it runs last: after the app's own closing lines.
	defer logs.Close()
	logger := slog.New(httpapi.NewLogHandler(logs, cfg.logFormat == "json"))
	cfg.app.Logger = logger
	if err := cfg.resolve(); err != nil {
		return err
	}
	if cfg.memoryLimit > 0 {
		debug.SetMemoryLimit(int64(cfg.memoryLimit))
	}
	if headroom := pacedHeadroom(cfg.gcHeadroom, os.Getenv("GOGC")); headroom > 0 {
		defer startGCPacer(headroom, nil)()
	}
	if cfg.cpuProfile != "" {
		stop, err := startCPUProfile(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if cfg.memProfile != "" {
		// Checked now, so that a path that cannot be written fails the
		// start, not the end.
		f, err := os.Create(cfg.memProfile)
		if err != nil {
			return fmt.Errorf("-memprofile: %w", err)
		}
		defer writeHeapProfile(f, logOutput)
	}
	tcpListener, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	tlsConf, err := cfg.tlsConfig(tcpListener.Addr())
	if err != nil {
		tcpListener.Close()
		return err
	}
	served, listener := cfg.listenerStack(tcpListener, tlsConf)
	cfg.app.ParkConn = listener.Park
	sandboxApp, err := app.New(cfg.app)
	if err != nil {
		tcpListener.Close()
		return err
	}
	defer sandboxApp.Close()

	srv := cfg.httpServer(sandboxApp.Handler, listener, logger)
	// Injected delays end as shutdown begins, or a tenant's 30 s delay
	// would outlast the grace period and fail the exit.
	srv.RegisterOnShutdown(sandboxApp.BeginShutdown)
	limits := cfg.app.Limits
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	url, others := baseURLs(scheme, tcpListener.Addr())
	attrs := []any{"url", url}
	if len(others) > 0 {
		attrs = append(attrs, "machine_urls", strings.Join(others, ","))
	}
	if cfg.tlsSelfSigned != "" {
		attrs = append(attrs, "ca", filepath.Join(cfg.tlsSelfSigned, caFile))
	}
	attrs = append(attrs, "frozen_clock", cfg.frozenClock,
		"rate_limits", fmt.Sprintf("%d/min %d/h %d/day", limits.Minute, limits.Hour, limits.Day), "max_conns", listener.max)
	logger.Info("sandbox listening", attrs...)
	// Harnesses read the address from the log as well: it goes out now,
	// not at the next tick.
	_ = logs.Flush()
	if cfg.announce != nil {
		// The one line on standard output, for harnesses that start the
		// sandbox on -addr 127.0.0.1:0 and need to know the port.
		fmt.Fprintln(cfg.announce, url)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- srv.Serve(served) }()
	select {
	case err := <-stopped:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cmp.Or(cfg.grace, shutdownGrace))
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		// What is still open is a client's doing (a body that stalls, an
		// answer never read): cut, the process stops on time, as asked.
		logger.Warn("shutdown: cut the connections still open after the grace period", "open", listener.Open())
		err = srv.Close()
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

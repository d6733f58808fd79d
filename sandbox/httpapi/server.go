// Package httpapi serves the Test-Campaign Service API v1, and the sandbox's
// own controls, over HTTP.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/testcampaign/kit/openapi/document"
	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/accounts"
)

// Options are what a Server is built from.
type Options struct {
	Accounts *accounts.Registry
	// Logger receives one line per request; it discards them if nil.
	Logger *slog.Logger
	// Clients bounds each client's requests and new accounts.
	Clients ClientLimits
	// ClientClock is what the client budgets' minutes are counted on;
	// time.Now if nil. Never an account's clock, which a tenant can move.
	ClientClock func() time.Time
	// WriteTimeout bounds the writing of one response, so that a client
	// that never reads holds its connection no longer; none if zero.
	WriteTimeout time.Duration
	// ParkConn, if set, is told that the connection of the request whose
	// context it gets waits in an injected delay or trickle, and returns
	// what to call when it stops waiting; the listener closes such
	// connections before it refuses a new one.
	ParkConn func(context.Context) (resume func())
	// CORS lets browser scripts of other origins call the sandbox.
	CORS CORS
}

// Server is the sandbox's HTTP interface.
type Server struct {
	accounts     *accounts.Registry
	logger       *slog.Logger
	clients      *clientBudgets
	writeTimeout time.Duration
	parkConn     func(context.Context) func()
	cors         CORS
	dates        lastFormatted[int64, []string]
	windows      lastFormatted[rateWindow, rateWindowValues]

	router  *mux.Router
	handler http.Handler

	// stopping is closed when shutdown begins, which ends injected delays.
	stopping chan struct{}
	stopOnce sync.Once
	// wait is how faults wait: waitFor, or a test's stand-in.
	wait func(ctx context.Context, d time.Duration) bool
}

// NewServer returns a server with every route and middleware in place.
func NewServer(opts Options) *Server {
	s := &Server{
		accounts: opts.Accounts, logger: opts.Logger, router: mux.NewRouter(),
		clients: newClientBudgets(opts.Clients, opts.ClientClock), writeTimeout: opts.WriteTimeout, parkConn: opts.ParkConn,
		cors: opts.CORS, stopping: make(chan struct{}),
	}
	s.wait = s.waitFor
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.routes()
	// Wrapped outside the router, not added with Router.Use, so that unknown
	// routes and wrong methods are logged, authenticated and limited too.
	s.handler = s.logRequests(s.recoverPanics(s.allowOrigins(s.limitClients(s.checkRequestLine(s.authenticate(s.journal(s.injectFaults(s.limitRate(s.limitBody(http.HandlerFunc(s.serveRoute)))))))))))
	return s
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// Path prefixes that need a test key.
const (
	apiPrefix     = "/v1/"
	controlPrefix = "/_sandbox/"
)

func (s *Server) routes() {
	// mux would answer unclean paths (/v1/bugs/., //v1/campaigns) with a bare
	// 301, outside the envelope, that turns a PATCH into a GET; unclean
	// paths are simply not routes.
	s.router.SkipClean(true)
	s.router.NotFoundHandler = http.HandlerFunc(s.notFound)
	s.router.MethodNotAllowedHandler = http.HandlerFunc(s.methodNotAllowed)

	// Full paths on the root router, not subrouters: a subrouter's method
	// mismatch reaches the root as a 404 instead of a 405.
	routes := []struct {
		method, path string
		handler      handlerFunc
	}{
		{http.MethodGet, "/healthz", s.health},

		{http.MethodGet, "/v1/campaigns", s.listCampaigns},
		{http.MethodPost, "/v1/campaigns", s.createCampaign},
		{http.MethodGet, "/v1/campaigns/{id}", s.getCampaign},
		{http.MethodGet, "/v1/bugs", s.listBugs},
		{http.MethodPatch, "/v1/bugs/{id}", s.updateBug},
		{http.MethodPost, "/v1/webhooks", s.createWebhook},
		{http.MethodGet, "/v1/testers", s.listTesters},
		{http.MethodGet, "/v1/analytics", s.analytics},

		{http.MethodPost, "/_sandbox/reset", s.resetAccount},
		{http.MethodPost, "/_sandbox/bugs", s.fileBug},
		{http.MethodGet, "/_sandbox/events", s.listEvents},
		{http.MethodGet, "/_sandbox/deliveries", s.listDeliveries},
		{http.MethodPost, "/_sandbox/deliveries/settle", s.settleDeliveries},
		{http.MethodGet, "/_sandbox/requests", s.listRequests},
		{http.MethodGet, "/_sandbox/verdict", s.judgeClient},
		{http.MethodGet, "/_sandbox/faults", s.listFaults},
		{http.MethodPost, "/_sandbox/faults", s.planFault},
		{http.MethodDelete, "/_sandbox/faults", s.clearFaults},
		{http.MethodGet, "/_sandbox/clock", s.readClock},
		{http.MethodPost, "/_sandbox/clock", s.moveClock},
	}
	for _, route := range routes {
		methods := []string{route.method}
		// net/http clients expect HEAD wherever GET is; the server
		// drops the body.
		if route.method == http.MethodGet {
			methods = append(methods, http.MethodHead)
		}
		s.route(route.path, s.handle(route.handler), methods...)
	}
	// The OpenAPI document is served as it is, not in an envelope.
	s.route("/openapi.json", serveDocument("application/json", document.JSON()), http.MethodGet, http.MethodHead)
	s.route("/openapi.yaml", serveDocument("application/yaml", document.YAML()), http.MethodGet, http.MethodHead)
}

// route adds a route for the path template, which is a plain path or one
// that ends in a variable segment, as /v1/campaigns/{id}. It is matched by
// comparing strings, not by the regular expression mux makes of a
// template: mux tried every route's expression in turn until one matched,
// and ran the matching one's twice more to take its variables. The route is
// named after its methods and template, as the OpenAPI document names its
// operations.
func (s *Server) route(template string, h http.Handler, methods ...string) {
	s.router.NewRoute().Name(strings.Join(methods, ",") + " " + template).
		MatcherFunc(pathMatcher(template)).Methods(methods...).Handler(h)
}

// pathMatcher matches the path of template as mux would with
// Path(template): a variable is one segment, not empty. It gives mux no
// variables, which it would keep in a map made for every request: the
// variable ends the path, where routeID reads it.
func pathMatcher(template string) mux.MatcherFunc {
	open := strings.LastIndexByte(template, '{')
	if open < 0 {
		return func(r *http.Request, match *mux.RouteMatch) bool {
			if r.URL.Path != template {
				return false
			}
			// Given a map, mux makes none.
			match.Vars = noVars
			return true
		}
	}
	prefix, name := template[:open], strings.TrimSuffix(template[open+1:], "}")
	if !strings.HasSuffix(prefix, "/") || strings.ContainsAny(prefix, "{}") || name != "id" {
		panic("httpapi: a route's template may only end in one variable segment, {id}: " + template)
	}
	return func(r *http.Request, match *mux.RouteMatch) bool {
		value, ok := strings.CutPrefix(r.URL.Path, prefix)
		// "." and ".." are not values but the unclean path of another
		// route, which is no route at all.
		if !ok || value == "" || value == "." || value == ".." || strings.IndexByte(value, '/') >= 0 {
			return false
		}
		match.Vars = noVars
		return true
	}
}

// noVars are the variables of a route that has none; nothing writes them.
var noVars = map[string]string{}

// serveRoute serves a request with the handler of the route mux matches for
// it, or the router's not-found or method-not-allowed handler. It is
// mux.Router.ServeHTTP without the two copies of the request it makes to
// carry the route and its variables, which routeID reads from the path.
func (s *Server) serveRoute(w http.ResponseWriter, r *http.Request) {
	// In the request's state, which is on the heap already: the router's
	// matchers take its address, which would move it there on its own.
	match := &stateOf(r).match
	if !s.router.Match(r, match) || match.Handler == nil {
		s.notFound(w, r)
		return
	}
	match.Handler.ServeHTTP(w, r)
}

// handlerFunc is an endpoint: it returns the response's data, or an error
// that writeError turns into the error envelope.
type handlerFunc func(r *http.Request) (any, error)

func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := h(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeData(w, r, data)
	})
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, sandbox.Errorf(sandbox.ErrNotFound, "no route for %s %s", r.Method, loggedPath(r)))
}

// allowMethods are the methods the API could route; Allow lists those the
// router matches for the request's path.
var allowMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// routedMethods are the methods the router serves on the request's path.
func (s *Server) routedMethods(r *http.Request) []string {
	var allowed []string
	for _, method := range allowMethods {
		probe := r.Clone(r.Context())
		probe.Method = method
		// Match also reports true when it falls back to the not-found or
		// method-not-allowed handler; only a match without error counts.
		var match mux.RouteMatch
		if s.router.Match(probe, &match) && match.MatchErr == nil {
			allowed = append(allowed, method)
		}
	}
	return allowed
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	allowed := s.routedMethods(r)
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	s.writeError(w, r, sandbox.Errorf(sandbox.ErrMethodNotAllowed, "%s is not allowed on %s; allowed: %s", r.Method, loggedPath(r), strings.Join(allowed, ", ")))
}

// health also tells an operator of a shared sandbox what it is holding, the
// figures that must stay flat over days.
func (s *Server) health(*http.Request) (any, error) {
	return health{Status: "ok", Accounts: s.accounts.Len(), Goroutines: runtime.NumGoroutine()}, nil
}

type health struct {
	Status     string `json:"status"`
	Accounts   int    `json:"accounts"`
	Goroutines int    `json:"goroutines"`
}

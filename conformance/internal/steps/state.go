package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/receiver"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// authMode says which Authorization header a scenario sends.
type authMode int

const (
	authConfigured authMode = iota // Bearer with the operator's key
	authNone                       // no Authorization header
	authRaw                        // a header value written in the scenario
)

// scenarioState is everything one scenario accumulates. Library.Initializer
// builds one for each scenario when godog initialises it, and binds the
// steps to it as its methods, so scenarios never share it.
type scenarioState struct {
	t       *transport.Target
	hooks   *receiver.Receiver // nil when no webhook receiver runs
	key     string             // the key sent with authConfigured; a fresh account replaces it
	auth    authMode
	rawAuth string
	headers http.Header
	saved   map[string]any
	// history is every exchange the scenario sent, in order.
	history []*wire.Exchange
	// read is what the steps on "the response" read: the last answer, or
	// what a walk of a list gathered or a wait brought from the receiver,
	// when one of those came after it. Neither a walk nor a delivery is
	// an exchange the scenario sent, so neither is in history.
	read *wire.Exchange
	// delivered is the delivery waited for last, which a wait for its
	// retry follows even with requests sent since.
	delivered *wire.Exchange
	// sink receives the every-response rule violations of the scenario.
	sink *rules.Sink
	// skip says why the scenario stopped without a verdict, if it did.
	skip string
	// hook is the scenario's endpoint on the webhook receiver, at
	// hookURLOpen; nil until a step needs it.
	hook        *receiver.Endpoint
	hookURLOpen string
	// usedDeliveries are the receiver's deliveries steps already consumed.
	usedDeliveries map[int]bool
	// fresh are the fresh sandbox accounts the scenario made.
	fresh []string
	// freshLeft and freshLimit are what the last answer to a fresh account
	// said of its window (freshLeft is -1 until one said it), so that a
	// scenario stops before its own setup runs into a small limit.
	freshLeft, freshLimit int
	// spends says the scenario spends a fresh account's window on purpose,
	// and goes on sending past its end to judge the refusals.
	spends bool
	// droppable is set once the scenario has planned a network fault, so
	// that a connection dropped afterwards is an answer to record.
	droppable bool
}

// newScenarioState is the state of a scenario about to start against t,
// with hooks the webhook receiver (nil when none runs).
func newScenarioState(t *transport.Target, hooks *receiver.Receiver) *scenarioState {
	return &scenarioState{t: t, hooks: hooks, key: t.Key, headers: http.Header{}, saved: map[string]any{}, sink: rules.NewSink(t.Coverage), usedDeliveries: map[int]bool{}, freshLeft: -1}
}

// last is the last exchange the scenario sent, or nil before any: the one
// a report shows beside a failed step.
func (s *scenarioState) last() *wire.Exchange {
	e, _ := s.lastSent()
	return e
}

// response is what the steps that judge "the response" read: the last
// answer, a walk's items or a delivery (see read). A request that got no
// answer fails them, saying so.
func (s *scenarioState) response() (*wire.Exchange, error) {
	if s.read == nil {
		return nil, errors.New("no request has been sent yet in this scenario")
	}
	if e := s.read; e.NoAnswer != "" {
		return e, fmt.Errorf("%s %s got no answer: the connection was dropped (%s)", e.Method, s.redact(pathOf(e.URL)), e.NoAnswer)
	}
	return s.read, nil
}

// record keeps an exchange the scenario sent, and makes it the response
// the next steps read.
func (s *scenarioState) record(e *wire.Exchange) {
	s.history = append(s.history, e)
	s.read = e
}

// readsDelivery says whether the response the steps read is a delivery.
func (s *scenarioState) readsDelivery() bool { return s.read != nil && s.read == s.delivered }

func (s *scenarioState) lastSent() (*wire.Exchange, error) {
	if len(s.history) == 0 {
		return nil, errors.New("no request has been sent yet in this scenario")
	}
	return s.history[len(s.history)-1], nil
}

// previous returns the response before the last one, for steps that compare
// two responses.
func (s *scenarioState) previous() (*wire.Exchange, *wire.Exchange, error) {
	if len(s.history) < 2 {
		return nil, nil, fmt.Errorf("this step compares two responses, but the scenario has sent %d request(s)", len(s.history))
	}
	return s.history[len(s.history)-2], s.history[len(s.history)-1], nil
}

var placeholderRe = regexp.MustCompile(`\{([A-Za-z][A-Za-z0-9_.-]*)\}`)

// expand replaces {name} placeholders: {key} is the operator's key, {random}
// a fresh random token, anything else a value saved earlier in the scenario.
func (s *scenarioState) expand(text string) (string, error) {
	return s.expandWith(text, func(v string) string { return v })
}

// expandTarget expands a request target, escaping each value for where it
// lands, so that a saved value holding "&", "/" or "#" cannot change which
// resource or filter is asked for.
func (s *scenarioState) expandTarget(target string) (string, error) {
	p, q, hasQuery := strings.Cut(target, "?")
	ep, err := s.expandWith(p, url.PathEscape)
	if err != nil || !hasQuery {
		return ep, err
	}
	eq, err := s.expandWith(q, url.QueryEscape)
	return ep + "?" + eq, err
}

func (s *scenarioState) expandWith(text string, escape func(string) string) (string, error) {
	var firstErr error
	out := placeholderRe.ReplaceAllStringFunc(text, func(m string) string {
		name := m[1 : len(m)-1]
		switch name {
		case "key":
			return escape(s.key)
		case "random":
			return wire.RandomToken()
		case "webhookURL":
			return escape(s.hookURL())
		}
		v, ok := s.saved[name]
		if !ok {
			if firstErr == nil {
				firstErr = fmt.Errorf("unknown placeholder %s: save a value under %q first (known: %s)", m, name, s.savedNames())
			}
			return m
		}
		if str, ok := v.(string); ok {
			return escape(str)
		}
		b, _ := json.Marshal(v)
		return escape(string(b))
	})
	return out, firstErr
}

// BuiltinPlaceholders are the {placeholders} every scenario has; expandWith
// gives each its value.
func BuiltinPlaceholders() []kit.Placeholder {
	return []kit.Placeholder{
		{Name: "key", Means: "the operator's key (never printed)"},
		{Name: "random", Means: "a fresh random token"},
		{Name: "webhookURL", Means: "the scenario's address on conform's webhook receiver"},
	}
}

func (s *scenarioState) savedNames() string {
	var names []string
	for _, p := range BuiltinPlaceholders() {
		names = append(names, p.Name)
	}
	for n := range s.saved {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// send performs one request and appends it to the history. Only transport
// failures are errors here; any HTTP answer is for the Then steps to judge.
func (s *scenarioState) send(ctx context.Context, method, path string, body []byte, contentType string) (*wire.Exchange, error) {
	r := s.request(method, path, body, contentType)
	fresh := s.auth == authConfigured && s.key != s.t.Key && strings.HasPrefix(path, "/v1")
	if fresh && s.freshLeft == 0 && !s.sink.Unbudgeted && !s.spends {
		s.skip = fmt.Sprintf("a fresh account's rate limit is %d a window, too small for this scenario", s.freshLimit)
		return nil, godog.ErrSkip
	}
	ex, err := s.t.Send(ctx, r)
	if errors.Is(err, transport.ErrBudgetSpent) {
		s.skip = fmt.Sprintf("the key's rate limit is %d a window and the run spends at most %d of it; this scenario needed more", s.t.Budget.Of, s.t.Budget.Share)
		return nil, godog.ErrSkip
	}
	if errors.Is(err, transport.ErrThrottled) {
		return nil, err
	}
	if ex == nil {
		return nil, fmt.Errorf("building %s %s: %w", method, path, err)
	}
	if err != nil {
		// A connection that a fault this scenario planned drops, or that
		// the client gave up on, is an outcome to check, not a reason to
		// stop: the steps after it look at what the account kept.
		gaveUp := errors.Is(context.Cause(ctx), errGaveUp)
		if gaveUp || (s.droppable && ctx.Err() == nil && dropped(err)) {
			ex := &wire.Exchange{Method: ex.Method, URL: ex.URL, ReqHeader: ex.ReqHeader, ReqBody: ex.ReqBody, Elapsed: ex.Elapsed, NoAnswer: s.redact(err.Error()), GaveUp: gaveUp}
			s.record(ex)
			return ex, nil
		}
		return nil, fmt.Errorf("%w: %s %s: %s", kit.ErrConnection, method, s.redact(ex.URL), s.redact(err.Error()))
	}
	// Only the account's own window tells how much is left of it; a
	// client address's budget is the deployment's business.
	if fresh && transport.ScopeOf(ex.Header) == transport.ScopeKey {
		if h, err := rules.ReadRateHeaders(ex); err == nil {
			s.freshLeft, s.freshLimit = h.Remaining, h.Limit
		}
	}
	if plansNetworkFault(ex) {
		s.droppable = true
	}
	s.record(ex)
	return ex, nil
}

// request is what a step sends, as the scenario's key and headers stand.
func (s *scenarioState) request(method, path string, body []byte, contentType string) transport.Request {
	r := transport.Request{Method: method, Path: path, Body: body, ContentType: contentType, Sink: s.sink,
		Header: http.Header{"Accept": {"application/json"}}}
	switch s.auth {
	case authConfigured:
		r.Key = s.key
	case authRaw:
		r.Auth = s.rawAuth
	}
	for k, vs := range s.headers {
		r.Header[k] = vs
	}
	return r
}

// requestLine describes the request of an exchange for a report, with the
// Authorization header shown only in redacted form.
func (s *scenarioState) requestLine(e *wire.Exchange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Method, e.URL)
	if a := e.ReqHeader.Get("Authorization"); a != "" {
		scheme, token, ok := strings.Cut(a, " ")
		if ok {
			fmt.Fprintf(&b, " (Authorization: %s %s)", scheme, wire.RedactKey(token))
		} else {
			fmt.Fprintf(&b, " (Authorization: %s)", wire.RedactKey(a))
		}
	} else {
		b.WriteString(" (no Authorization header)")
	}
	if len(e.ReqBody) > 0 {
		fmt.Fprintf(&b, " body: %s", wire.Truncate(s.redact(string(e.ReqBody)), 200))
	}
	return s.redact(b.String())
}

// responseLine describes what came back, with the headers the spec cares about.
func (s *scenarioState) responseLine(e *wire.Exchange) string {
	if e.NoAnswer != "" {
		return "no answer: the connection was dropped (" + s.redact(e.NoAnswer) + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d", e.Status)
	if ct := e.Header.Get("Content-Type"); ct != "" {
		fmt.Fprintf(&b, " Content-Type: %s;", ct)
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "WWW-Authenticate", "Retry-After", "Allow"} {
		if v, ok := e.Header[h]; ok {
			fmt.Fprintf(&b, " %s: %s;", h, strings.Join(v, ","))
		}
	}
	fmt.Fprintf(&b, " body: %s", wire.Truncate(s.redact(strings.TrimSpace(string(e.Body))), 300))
	if e.BodyCut {
		b.WriteString(" " + wire.CutNote)
	}
	return s.redact(b.String())
}

// redact hides every credential the scenario knows of: the operator's key,
// a fresh account's key and any key a step sent. It runs before any
// truncation, so that a cut never leaves most of a key behind.
func (s *scenarioState) redact(text string) string {
	text = wire.RedactAll(s.t.Redact(text), append(s.sink.SentKeys(), s.key)...)
	for _, secret := range s.secretsSeen() {
		text = strings.ReplaceAll(text, secret, redactSecret(secret))
	}
	return text
}

// secretsSeen are the values of fields named like "secret" in the
// scenario's request and answer bodies, such as a webhook's signing
// secret: a report shows them no more than a key.
func (s *scenarioState) secretsSeen() []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if str, ok := c.(string); ok && len(str) >= 8 && strings.Contains(strings.ToLower(k), "secret") {
					out = append(out, str)
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	for _, e := range s.history {
		if v, err := e.JSON(); err == nil {
			walk(v)
		}
		if v, err := wire.DecodeJSON(e.ReqBody); err == nil {
			walk(v)
		}
	}
	return out
}

// redactSecret shows a secret as its prefix word and, when it is long
// enough to spare them, its last four characters, as keys are shown.
func redactSecret(secret string) string {
	prefix := ""
	if i := strings.IndexByte(secret, '_'); i >= 0 && i < 8 {
		prefix = secret[:i+1]
	}
	if len(secret)-len(prefix) < 16 {
		return prefix + "…"
	}
	return prefix + "…" + secret[len(secret)-4:]
}

// sent is how many requests the scenario has sent.
func (s *scenarioState) sent() int { return len(s.history) }

// transcript is every exchange of the scenario, one line each, redacted.
func (s *scenarioState) transcript() []string {
	out := make([]string, 0, len(s.history))
	for _, e := range s.history {
		out = append(out, s.requestLine(e)+"\n    → "+s.responseLine(e))
	}
	return out
}

// plansNetworkFault tells whether ex planned a fault that drops or cuts
// connections.
func plansNetworkFault(ex *wire.Exchange) bool {
	if ex.Method != http.MethodPost || !strings.HasSuffix(strings.TrimRight(pathOf(ex.URL), "/"), "/_sandbox/faults") || ex.Status/100 != 2 {
		return false
	}
	doc, err := ex.JSON()
	if err != nil {
		return false
	}
	v, err := wire.Lookup(doc, "data.network")
	n, _ := v.(string)
	return err == nil && n != ""
}

func pathOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Path
	}
	return u
}

// dropped tells whether err is a connection ended without (the whole of)
// an answer, as the network faults end it, rather than one never made.
func dropped(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "server closed")
}

// forget lets go of the scenario's exchanges and saved values once its
// result is recorded.
func (s *scenarioState) forget() {
	s.history, s.saved, s.read, s.delivered = nil, nil, nil, nil
	s.sink.Forget()
}

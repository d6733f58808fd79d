package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/cucumber/godog"
)

// ErrConnection marks failures to talk to the deployment at all, as opposed
// to answers that deviate from the spec; the runner ranks them as errors.
var ErrConnection = errors.New("connection error")

// target is what every scenario of one run shares: where to send requests and
// with which credentials. It is read-only once the run starts.
type target struct {
	baseURL string
	key     string
	profile string
	client  *http.Client
	redact  func(string) string
	budget  *budget
	hooks   *receiver // nil when no webhook receiver runs
	// schema checks every exchange and delivery when --openapi is set.
	schema Schema
	// seeded says whether a fresh sandbox account holds the built-in seed.
	seeded bool
	// model checks every exchange of a scenario against the contract.
	model *model
}

// authMode says which Authorization header a scenario sends.
type authMode int

const (
	authConfigured authMode = iota // Bearer with the operator's key
	authNone                       // no Authorization header
	authRaw                        // a header value written in the scenario
)

// exchange is one request and its response, kept so that later steps can
// check it and the report can show what was sent and what came back.
type exchange struct {
	method     string
	url        string
	reqHeader  http.Header
	reqBody    []byte
	status     int
	header     http.Header
	body       []byte
	parsed     any
	parseErr   error
	parseTried bool
}

// json returns the decoded body, numbers kept as json.Number so that integers,
// decimals and their exact spelling can be told apart.
func (e *exchange) json() (any, error) {
	if !e.parseTried {
		e.parseTried = true
		e.parsed, e.parseErr = decodeJSON(e.body)
	}
	return e.parsed, e.parseErr
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("body is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("body is not JSON: trailing data after the first value")
	}
	return v, nil
}

// scenarioState is everything one scenario accumulates. A fresh value is put
// into the context before each scenario, so scenarios never share it.
type scenarioState struct {
	t       *target
	key     string // the key sent with authConfigured; a fresh account replaces it
	auth    authMode
	rawAuth string
	headers http.Header
	saved   map[string]any
	history []*exchange
	// sink receives the every-response rule violations of the scenario.
	sink *ruleSink
	// skip says why the scenario stopped without a verdict, if it did.
	skip string
	// hook is the scenario's endpoint on the webhook receiver, at
	// /hooks/<hookToken>; nil until a step needs it.
	hook      *hookEndpoint
	hookToken string
	// usedDeliveries are the receiver's deliveries steps already consumed.
	usedDeliveries map[int]bool
	// freshLeft and freshLimit are what the last answer to a fresh account
	// said of its window (freshLeft is -1 until one said it), so that a
	// scenario stops before its own setup runs into a small limit.
	freshLeft, freshLimit int
}

type stateKey struct{}

func withState(ctx context.Context, s *scenarioState) context.Context {
	return context.WithValue(ctx, stateKey{}, s)
}

func stateFrom(ctx context.Context) *scenarioState {
	s, _ := ctx.Value(stateKey{}).(*scenarioState)
	if s == nil {
		// Steps only run inside scenarios the runner prepared; reaching this
		// means the step library was registered without its hooks.
		panic("conformance: step run without scenario state; register steps with Register")
	}
	return s
}

func newScenarioState(t *target) *scenarioState {
	return &scenarioState{t: t, key: t.key, headers: http.Header{}, saved: map[string]any{}, sink: newRuleSink(), usedDeliveries: map[int]bool{}, freshLeft: -1}
}

func (s *scenarioState) last() (*exchange, error) {
	if len(s.history) == 0 {
		return nil, errors.New("no request has been sent yet in this scenario")
	}
	return s.history[len(s.history)-1], nil
}

// previous returns the response before the last one, for steps that compare
// two responses.
func (s *scenarioState) previous() (*exchange, *exchange, error) {
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
			return randomToken()
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

func (s *scenarioState) savedNames() string {
	names := []string{"key", "random", "webhookURL"}
	for n := range s.saved {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func randomToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// send performs one request and appends it to the history. Only transport
// failures are errors here; any HTTP answer is for the Then steps to judge.
func (s *scenarioState) send(ctx context.Context, method, path string, body []byte, contentType string) (*exchange, error) {
	target := strings.TrimRight(s.t.baseURL, "/") + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.WithValue(ctx, ruleSinkKey{}, s.sink), method, target, rd)
	if err != nil {
		return nil, fmt.Errorf("building %s %s: %w", method, path, err)
	}
	switch s.auth {
	case authConfigured:
		req.Header.Set("Authorization", "Bearer "+s.key)
	case authRaw:
		req.Header.Set("Authorization", s.rawAuth)
	}
	if body != nil && contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	for k, vs := range s.headers {
		req.Header[k] = vs
	}
	fresh := s.auth == authConfigured && s.key != s.t.key && strings.HasPrefix(path, "/v1")
	if fresh && s.freshLeft == 0 && !s.sink.unbudgeted {
		s.skip = fmt.Sprintf("a fresh account's rate limit is %d a window, too small for this scenario", s.freshLimit)
		return nil, godog.ErrSkip
	}
	resp, err := s.t.client.Do(req)
	if errors.Is(err, errBudgetSpent) {
		s.skip = fmt.Sprintf("the key's rate limit is %d a window and the run spends at most %d of it; this scenario needed more", s.t.budget.of, s.t.budget.share)
		return nil, godog.ErrSkip
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %s", ErrConnection, method, s.redact(target), s.redact(err.Error()))
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the answer to %s %s: %s", ErrConnection, method, s.redact(path), s.redact(err.Error()))
	}
	ex := &exchange{
		method: method, url: target, reqHeader: req.Header, reqBody: body,
		status: resp.StatusCode, header: resp.Header, body: rb,
	}
	// A 429 on the operator's key that the run's own share cannot explain
	// was caused by the key's other clients: nothing to judge here.
	if ex.status == http.StatusTooManyRequests && s.auth == authConfigured && s.key == s.t.key && !s.sink.unbudgeted && s.t.budget != nil {
		s.skip = fmt.Sprintf("the key's window was spent by its other clients: 429 while the run had spent at most %d of its share of %d", s.t.budget.share, s.t.budget.of)
		return nil, godog.ErrSkip
	}
	if fresh {
		if h, err := readRateHeaders(ex); err == nil {
			s.freshLeft, s.freshLimit = h.remaining, h.limit
		}
	}
	s.history = append(s.history, ex)
	return ex, nil
}

// requestLine describes the request of an exchange for a report, with the
// Authorization header shown only in redacted form.
func (s *scenarioState) requestLine(e *exchange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.method, e.url)
	if a := e.reqHeader.Get("Authorization"); a != "" {
		scheme, token, ok := strings.Cut(a, " ")
		if ok {
			fmt.Fprintf(&b, " (Authorization: %s %s)", scheme, RedactKey(token))
		} else {
			fmt.Fprintf(&b, " (Authorization: %s)", RedactKey(a))
		}
	} else {
		b.WriteString(" (no Authorization header)")
	}
	if len(e.reqBody) > 0 {
		fmt.Fprintf(&b, " body: %s", truncate(s.redact(string(e.reqBody)), 200))
	}
	return s.redact(b.String())
}

// responseLine describes what came back, with the headers the spec cares about.
func (s *scenarioState) responseLine(e *exchange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", e.status)
	if ct := e.header.Get("Content-Type"); ct != "" {
		fmt.Fprintf(&b, " Content-Type: %s;", ct)
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "WWW-Authenticate", "Retry-After", "Allow"} {
		if v, ok := e.header[h]; ok {
			fmt.Fprintf(&b, " %s: %s;", h, strings.Join(v, ","))
		}
	}
	fmt.Fprintf(&b, " body: %s", truncate(s.redact(strings.TrimSpace(string(e.body))), 300))
	return s.redact(b.String())
}

// redact hides every credential the scenario knows of: the operator's key,
// a fresh account's key and any key a step sent. It runs before any
// truncation, so that a cut never leaves most of a key behind.
func (s *scenarioState) redact(text string) string {
	text = s.t.redact(text)
	keys := append(s.sink.sentKeys(), s.key)
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		if len(k) >= 8 {
			text = strings.ReplaceAll(text, k, RedactKey(k))
		}
	}
	return text
}

// transcript is every exchange of the scenario, one line each, redacted.
func (s *scenarioState) transcript() []string {
	out := make([]string, 0, len(s.history))
	for _, e := range s.history {
		out = append(out, s.requestLine(e)+"\n    → "+s.responseLine(e))
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

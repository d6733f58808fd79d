package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// maxBody bounds what the kit reads of one answer, so that a deployment
// streaming without end cannot exhaust its memory.
const maxBody = 8 << 20

// errBudgetSpent refuses a request with the operator's key once the run has
// spent its share of the key's rate-limit window.
var errBudgetSpent = errors.New("rate-limit budget spent")

// ruleViolation is the first break of a rule that holds for every response,
// seen on some exchange of a scenario.
type ruleViolation struct {
	rule    string // what the rule says, as a report shows it
	level   string // LevelMust, LevelShould or LevelSandbox
	area    string // the report's area for the break; the scenario's own if empty
	message string
	request string // method and URL of the exchange that broke it
	// exchange is the exchange that broke it, for the report to show.
	exchange *exchange
}

// ruleSink collects the every-response violations of one scenario. Only the
// first break of each rule is kept: the rest say nothing new.
type ruleSink struct {
	mu         sync.Mutex
	violations []ruleViolation
	// keys are the credentials the scenario sent; none may come back whole.
	keys map[string]bool
	// unbudgeted scenarios (@exhaustive ones) spend the window on purpose.
	unbudgeted bool
}

func newRuleSink() *ruleSink { return &ruleSink{keys: map[string]bool{}} }

func (s *ruleSink) add(v ruleViolation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.violations {
		if o.rule == v.rule {
			return
		}
	}
	s.violations = append(s.violations, v)
}

// first returns the first violation, ranking @must and @sandbox ones before
// @should ones so that a run never reports only a warning for a failure.
func (s *ruleSink) first() (ruleViolation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.violations {
		if v.level != LevelShould {
			return v, true
		}
	}
	if len(s.violations) > 0 {
		return s.violations[0], true
	}
	return ruleViolation{}, false
}

func (s *ruleSink) sentKey(k string) {
	if len(k) < 8 || k == LivePrefix || k == TestPrefix {
		return // a bare prefix or a short token is ordinary text, not a secret
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[k] = true
}

func (s *ruleSink) sentKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.keys))
	for k := range s.keys {
		out = append(out, k)
	}
	return out
}

// budget is the share of the operator key's rate-limit window the run may
// spend, so that conform never starves the key's other clients or its own
// later scenarios.
type budget struct {
	mu    sync.Mutex
	left  int
	of    int // the limit in force when the run started
	share int // how much of it the run may spend
}

func (b *budget) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left <= 0 {
		return false
	}
	b.left--
	return true
}

// checkingTransport is the one path every request of a run takes. It spends
// the rate-limit budget and checks the rules that hold for every response,
// and, with --openapi, the exchange against the document.
type checkingTransport struct {
	next   http.RoundTripper
	target *target
}

func (t *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	sink, _ := req.Context().Value(ruleSinkKey{}).(*ruleSink)
	token := bearerToken(req.Header.Get("Authorization"))
	if sink != nil {
		sink.sentKey(token)
	}
	if b := t.target.budget; sink != nil && !sink.unbudgeted && b != nil && token == t.target.key && strings.HasPrefix(req.URL.Path, "/v1") && !b.take() {
		return nil, fmt.Errorf("%w: %d of a limit of %d", errBudgetSpent, b.share, b.of)
	}
	var reqBody []byte
	var fl *flight
	if m := t.target.model; m != nil && sink != nil && token != "" {
		fl = m.begin(token)
	}
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			reqBody, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || sink == nil {
		if fl != nil {
			t.target.model.abandon(fl)
		}
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	if err != nil {
		if fl != nil {
			t.target.model.abandon(fl)
		}
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	e := &exchange{method: req.Method, url: req.URL.String(), reqHeader: req.Header, reqBody: reqBody,
		status: resp.StatusCode, header: resp.Header, body: body}
	t.check(sink, req, e)
	if fl != nil {
		t.target.feedModel(fl, sink, token, req, reqBody, resp, body)
	}
	if t.target.schema != nil {
		if v, ok := schemaViolation(t.target.schema.Check(req, reqBody, resp, body), req.Method+" "+req.URL.Path); ok {
			v.exchange = e
			sink.add(v)
		}
	}
	return resp, nil
}

type ruleSinkKey struct{}

// bearerToken is the credential of an Authorization header: the part after
// the scheme word, whichever scheme it is.
func bearerToken(h string) string {
	f := strings.Fields(h)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// leaks tells whether text shows more of key than its prefix and last four
// characters: the key whole, its secret part, or all of the secret but its
// end (as in "svc_test_abcdefgh…" cut short).
func leaks(text []byte, key string) bool {
	secret := key
	for _, p := range []string{LivePrefix, TestPrefix} {
		secret = strings.TrimPrefix(secret, p)
	}
	if bytes.Contains(text, []byte(key)) || (len(secret) >= 8 && bytes.Contains(text, []byte(secret))) {
		return true
	}
	return len(secret) >= 10 && bytes.Contains(text, []byte(secret[:len(secret)-4]))
}

// check applies the rules of every response: the envelope with error.status
// equal to the HTTP status (spec §4, §7), a JSON content type, and no
// credential sent in the scenario echoed whole. Outside /v1 the spec says
// nothing, so there only the sandbox profile holds answers to the envelope.
func (t *checkingTransport) check(sink *ruleSink, req *http.Request, e *exchange) {
	body := e.body
	where := req.Method + " " + req.URL.Path
	if req.URL.RawQuery != "" {
		where += "?" + req.URL.RawQuery
	}
	inAPI := req.URL.Path == "/v1" || strings.HasPrefix(req.URL.Path, "/v1/")
	// An answer to HEAD has no body to hold to the envelope (RFC 9110).
	if (inAPI || t.target.profile == ProfileSandbox) && req.Method != http.MethodHead {
		if err := checkEnvelope(e, envelopeEither); err != nil {
			sink.add(ruleViolation{rule: "every response is the envelope (spec §4, §7)", level: LevelMust, message: err.Error(), request: where, exchange: e})
		}
		if err := checkJSONContentType(e); err != nil {
			sink.add(ruleViolation{rule: "every response is JSON with a JSON content type", level: LevelShould, message: err.Error(), request: where, exchange: e})
		}
	}
	if t.target.profile == ProfileSandbox {
		if v, err := decodeJSON(body); err == nil {
			if err := checkTimestamps(v); err != nil {
				sink.add(ruleViolation{rule: "every timestamp is RFC 3339 UTC with three fractional digits (CONTRACT)", level: LevelSandbox, message: err.Error(), request: where, exchange: e})
			}
		}
	}
	level := LevelShould
	if t.target.profile == ProfileSandbox {
		level = LevelSandbox
	}
	for _, k := range sink.sentKeys() {
		found := leaks(body, k)
		for _, vs := range e.header {
			for _, v := range vs {
				found = found || leaks([]byte(v), k)
			}
		}
		if found {
			sink.add(ruleViolation{rule: "a key is never echoed whole", level: level,
				message: fmt.Sprintf("the response echoes the key %s sent with the request", RedactKey(k)), request: where, exchange: e})
		}
	}
}

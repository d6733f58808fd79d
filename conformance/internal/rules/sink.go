package rules

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/testcampaign/kit/conformance/internal/coverage"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
	"github.com/testcampaign/kit/docs"
)

// RuleViolation is the first break of a rule that holds for every response,
// seen on some exchange of a scenario.
type RuleViolation struct {
	ID      string // the rule's ID in docs/contract.md
	Rule    string // what the rule says, as a report shows it
	Level   string // docs.Must, docs.Should or docs.Sandbox
	Area    string // the report's area for the break; the scenario's own if empty
	Message string
	Request string // method and URL of the exchange that broke it
	// Exchange is the exchange that broke it, for the report to show.
	Exchange *wire.Exchange
	// Where is the step that sent it (file:line), when the sink knows.
	Where string
}

// Sink collects the every-response violations of one scenario. Only the
// first break of each rule is kept: the rest say nothing new.
type Sink struct {
	mu         sync.Mutex
	violations []RuleViolation
	// at is the step now running, stamped on what it breaks.
	at string
	// keys are the credentials the scenario sent; none may come back whole.
	keys map[string]bool
	// Unbudgeted scenarios (@exhaustive ones) spend the window on purpose.
	Unbudgeted bool
	// Coverage counts the rules judged on the run's exchanges; nil keeps
	// no count.
	Coverage *coverage.Recorder
}

// NewSink starts the sink of one scenario; cov is the run's coverage,
// or nil.
func NewSink(cov *coverage.Recorder) *Sink {
	return &Sink{keys: map[string]bool{}, Coverage: cov}
}

// Judged records that the rules were judged on one exchange of the
// scenario, whether they held or not.
func (s *Sink) Judged(ids ...string) { s.Coverage.Judged(ids...) }

// Broke records a break of a rule, and keeps it when it is the rule's
// first break in the scenario.
func (s *Sink) Broke(v RuleViolation) {
	s.Coverage.Broke(v.ID)
	s.Add(v)
}

// At says which step (file:line) the next exchanges belong to.
func (s *Sink) At(where string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = where
}

// Add keeps v unless the rule it breaks broke before.
func (s *Sink) Add(v RuleViolation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v.Where == "" {
		v.Where = s.at
	}
	for _, o := range s.violations {
		if o.Rule == v.Rule {
			return
		}
	}
	s.violations = append(s.violations, v)
}

// First returns the first violation, ranking @must and @sandbox ones before
// @should ones so that a run never reports only a warning for a failure.
func (s *Sink) First() (RuleViolation, bool) {
	return s.first(func(RuleViolation) bool { return true })
}

// BrokenAt returns the first violation of the exchanges the step at where
// (file:line) sent, ranked as First ranks them.
func (s *Sink) BrokenAt(where string) (RuleViolation, bool) {
	return s.first(func(v RuleViolation) bool { return v.Where == where })
}

func (s *Sink) first(keep func(RuleViolation) bool) (RuleViolation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var should *RuleViolation
	for i, v := range s.violations {
		switch {
		case !keep(v):
		case v.Level != docs.Should:
			return v, true
		case should == nil:
			should = &s.violations[i]
		}
	}
	if should != nil {
		return *should, true
	}
	return RuleViolation{}, false
}

// SentKey records a credential the scenario sent; no answer may echo it.
func (s *Sink) SentKey(k string) {
	if len(k) < 8 || k == kit.LivePrefix || k == kit.TestPrefix {
		return // a bare prefix or a short token is ordinary text, not a secret
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[k] = true
}

// SentKeys are the credentials the scenario sent.
func (s *Sink) SentKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.keys))
	for k := range s.keys {
		out = append(out, k)
	}
	return out
}

// leaks tells whether text shows more of key than its prefix and last four
// characters: the key in any of the spellings every report is cleaned of,
// or a fragment of it.
func leaks(text []byte, key string) bool {
	for _, forms := range [][]string{wire.Spellings(key), wire.Fragments(key)} {
		for _, f := range forms {
			if bytes.Contains(text, []byte(f)) {
				return true
			}
		}
	}
	return false
}

// FaultWroteBody tells whether an answer's body is one a planned fault of
// the sandbox wrote in place of the API's: it carries X-Sandbox-Fault and
// is not the envelope, as a malformed answer (FAULT-22) or a status fault's
// own body (FAULT-17) is. No document describes such a body; the model
// judges it against the fault.
func FaultWroteBody(profile string, e *wire.Exchange) bool {
	return profile == kit.ProfileSandbox && e.Header.Get("X-Sandbox-Fault") != "" && CheckEnvelope(e, EnvelopeEither) != nil
}

// CheckResponse applies the rules of every response: the envelope (ENV-1 to
// ENV-7), a JSON content type (ENV-8, ENV-9), the sandbox's timestamps
// (ENV-11), error codes (ERR-4, ERR-5), budget scopes (RATE-14) and the
// HTTP server's own 431 (ERR-24), and no
// credential sent in the scenario echoed whole (AUTH-6).
// Outside /v1 the spec says nothing, so there only the sandbox profile
// holds answers to the envelope.
func CheckResponse(profile string, sink *Sink, req *http.Request, e *wire.Exchange) {
	body := e.Body
	where := req.Method + " " + req.URL.Path
	if req.URL.RawQuery != "" {
		where += "?" + req.URL.RawQuery
	}
	inAPI := req.URL.Path == "/v1" || strings.HasPrefix(req.URL.Path, "/v1/")
	// An answer to HEAD has no body to hold to the envelope (RFC 9110).
	// The OpenAPI document is served as it is, not in an envelope (ROUTE-7).
	document := req.URL.Path == "/openapi.json" || req.URL.Path == "/openapi.yaml"
	// An answer a planned fault wrote (X-Sandbox-Fault) is what the plan
	// asked for, a malformed body or a raw one included: the model judges
	// it against the fault (FAULT rules), not against the envelope.
	planned := profile == kit.ProfileSandbox && e.Header.Get("X-Sandbox-Fault") != ""
	// A browser's preflight that the sandbox answers as one (WEB-2) is no
	// answer of the API: it has no body to hold to the envelope.
	preflight := req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" && e.Header.Get("Access-Control-Allow-Origin") != ""
	// Headers too large to read are refused by the HTTP server itself,
	// before any handler could write an envelope (ERR-24).
	unread := e.Status == http.StatusRequestHeaderFieldsTooLarge
	if unread && profile == kit.ProfileSandbox {
		sink.Judged("ERR-24")
		if media := strings.TrimSpace(strings.Split(e.Header.Get("Content-Type"), ";")[0]); media != "text/plain" {
			sink.Broke(RuleViolation{ID: "ERR-24", Rule: "headers too large get the HTTP server's plain-text 431", Level: docs.Sandbox,
				Message: fmt.Sprintf("want a plain-text 431, got Content-Type %q", e.Header.Get("Content-Type")), Request: where, Exchange: e})
		}
	}
	if (inAPI || profile == kit.ProfileSandbox) && !document && !planned && !unread && !preflight && req.Method != http.MethodHead {
		sink.Judged(envelopeRules...)
		if err := CheckEnvelope(e, EnvelopeEither); err != nil {
			sink.Broke(RuleViolation{ID: ruleOf(err), Rule: "every response is the envelope (spec §4, §7)", Level: docs.Must, Message: err.Error(), Request: where, Exchange: e})
		}
		if inAPI {
			sink.Judged("ENV-8")
			if err := CheckJSONContentType(e); err != nil {
				sink.Broke(RuleViolation{ID: "ENV-8", Rule: "every response is JSON with a JSON content type", Level: docs.Must, Message: err.Error(), Request: where, Exchange: e})
			}
		}
	}
	// The sandbox says exactly application/json on every answer it writes,
	// HEAD included, which answers the headers GET would: a charset or a
	// +json type is a choice it documents against (ENV-9), whatever the
	// spec allows (ENV-8). A preflight answered as one is a 204 with no
	// body, so no type.
	if profile == kit.ProfileSandbox && !document && !planned && !unread && !preflight {
		sink.Judged("ENV-9")
		if ct := e.Header.Get("Content-Type"); ct != "application/json" {
			sink.Broke(RuleViolation{ID: "ENV-9", Rule: "every answer of the sandbox says Content-Type: application/json", Level: docs.Sandbox,
				Message: fmt.Sprintf("want Content-Type \"application/json\" exactly, got %q", ct), Request: where, Exchange: e})
		}
	}
	if profile == kit.ProfileSandbox && !planned && !unread {
		if judged, err := checkErrorCode(e); judged {
			sink.Judged("ERR-4", "ERR-5")
			if err != nil {
				sink.Broke(RuleViolation{ID: ruleOf(err), Rule: "every error has a documented code with its status", Level: docs.Sandbox, Message: err.Error(), Request: where, Exchange: e})
			}
		}
		if judged, err := checkScope(req.URL.Path, e); judged {
			sink.Judged("RATE-14")
			if err != nil {
				sink.Broke(RuleViolation{ID: "RATE-14", Rule: "every budget reported names its scope", Level: docs.Sandbox, Message: err.Error(), Request: where, Exchange: e})
			}
		}
	}
	if profile == kit.ProfileSandbox && !document {
		if v, err := e.JSON(); err == nil && CountTimestamps(v) > 0 {
			sink.Judged("ENV-11")
			if err := CheckTimestamps(v); err != nil {
				sink.Broke(RuleViolation{ID: "ENV-11", Rule: "every timestamp is RFC 3339 UTC with three fractional digits", Level: docs.Sandbox, Message: err.Error(), Request: where, Exchange: e})
			}
		}
	}
	level := docs.Should
	if profile == kit.ProfileSandbox {
		level = docs.Sandbox
	}
	keys := sink.SentKeys()
	if len(keys) > 0 {
		sink.Judged("AUTH-6")
	}
	for _, k := range keys {
		found := leaks(body, k)
		for _, vs := range e.Header {
			for _, v := range vs {
				found = found || leaks([]byte(v), k)
			}
		}
		if found {
			sink.Broke(RuleViolation{ID: "AUTH-6", Rule: "a key is never echoed whole", Level: level,
				Message: fmt.Sprintf("the response echoes the key %s sent with the request", wire.RedactKey(k)), Request: where, Exchange: e})
		}
	}
}

// Forget lets go of the violations' exchanges once the scenario's result
// is recorded.
func (s *Sink) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = nil
}

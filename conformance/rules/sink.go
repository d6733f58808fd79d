package rules

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/testcampaign/kit/conformance/report"
	"github.com/testcampaign/kit/conformance/wire"
)

// RuleViolation is the first break of a rule that holds for every response,
// seen on some exchange of a scenario.
type RuleViolation struct {
	Rule    string // what the rule says, as a report shows it
	Level   string // LevelMust, LevelShould or LevelSandbox
	Area    string // the report's area for the break; the scenario's own if empty
	Message string
	Request string // method and URL of the exchange that broke it
	// Exchange is the exchange that broke it, for the report to show.
	Exchange *wire.Exchange
}

// RuleSink collects the every-response violations of one scenario. Only the
// first break of each rule is kept: the rest say nothing new.
type RuleSink struct {
	mu         sync.Mutex
	violations []RuleViolation
	// keys are the credentials the scenario sent; none may come back whole.
	keys map[string]bool
	// Unbudgeted scenarios (@exhaustive ones) spend the window on purpose.
	Unbudgeted bool
}

func NewRuleSink() *RuleSink { return &RuleSink{keys: map[string]bool{}} }

func (s *RuleSink) Add(v RuleViolation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.violations {
		if o.Rule == v.Rule {
			return
		}
	}
	s.violations = append(s.violations, v)
}

// First returns the first violation, ranking @must and @sandbox ones before
// @should ones so that a run never reports only a warning for a failure.
func (s *RuleSink) First() (RuleViolation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.violations {
		if v.Level != report.LevelShould {
			return v, true
		}
	}
	if len(s.violations) > 0 {
		return s.violations[0], true
	}
	return RuleViolation{}, false
}

func (s *RuleSink) SentKey(k string) {
	if len(k) < 8 || k == wire.LivePrefix || k == wire.TestPrefix {
		return // a bare prefix or a short token is ordinary text, not a secret
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[k] = true
}

func (s *RuleSink) SentKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.keys))
	for k := range s.keys {
		out = append(out, k)
	}
	return out
}

// leaks tells whether text shows more of key than its prefix and last four
// characters: the key whole, its secret part, or all of the secret but its
// end (as in "svc_test_abcdefgh…" cut short).
func leaks(text []byte, key string) bool {
	secret := key
	for _, p := range []string{wire.LivePrefix, wire.TestPrefix} {
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
func CheckResponse(profile string, sink *RuleSink, req *http.Request, e *wire.Exchange) {
	body := e.Body
	where := req.Method + " " + req.URL.Path
	if req.URL.RawQuery != "" {
		where += "?" + req.URL.RawQuery
	}
	inAPI := req.URL.Path == "/v1" || strings.HasPrefix(req.URL.Path, "/v1/")
	// An answer to HEAD has no body to hold to the envelope (RFC 9110).
	if (inAPI || profile == wire.ProfileSandbox) && req.Method != http.MethodHead {
		if err := CheckEnvelope(e, EnvelopeEither); err != nil {
			sink.Add(RuleViolation{Rule: "every response is the envelope (spec §4, §7)", Level: report.LevelMust, Message: err.Error(), Request: where, Exchange: e})
		}
		if err := CheckJSONContentType(e); err != nil {
			sink.Add(RuleViolation{Rule: "every response is JSON with a JSON content type", Level: report.LevelShould, Message: err.Error(), Request: where, Exchange: e})
		}
	}
	if profile == wire.ProfileSandbox {
		if v, err := wire.DecodeJSON(body); err == nil {
			if err := CheckTimestamps(v); err != nil {
				sink.Add(RuleViolation{Rule: "every timestamp is RFC 3339 UTC with three fractional digits (CONTRACT)", Level: report.LevelSandbox, Message: err.Error(), Request: where, Exchange: e})
			}
		}
	}
	level := report.LevelShould
	if profile == wire.ProfileSandbox {
		level = report.LevelSandbox
	}
	for _, k := range sink.SentKeys() {
		found := leaks(body, k)
		for _, vs := range e.Header {
			for _, v := range vs {
				found = found || leaks([]byte(v), k)
			}
		}
		if found {
			sink.Add(RuleViolation{Rule: "a key is never echoed whole", Level: level,
				Message: fmt.Sprintf("the response echoes the key %s sent with the request", wire.RedactKey(k)), Request: where, Exchange: e})
		}
	}
}

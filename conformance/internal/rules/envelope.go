// Package rules holds what every response must meet, whatever the scenario
// that asked: the envelope, a JSON content type, the contract's timestamps,
// no credential echoed, the OpenAPI document when one is given. It collects
// the breaks of one scenario in a Sink, and reads the rate-limit headers of
// spec section 8.
package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

// ruleError is a break of one rule of docs/contract.md: the error says
// what broke, ID which rule.
type ruleError struct {
	ID  string
	Err error
}

func (e *ruleError) Error() string { return e.Err.Error() }
func (e *ruleError) Unwrap() error { return e.Err }

func broken(id, format string, args ...any) error {
	return &ruleError{ID: id, Err: fmt.Errorf(format, args...)}
}

// ruleOf is the ID of the rule err broke, or "" if it names none.
func ruleOf(err error) string {
	var re *ruleError
	if errors.As(err, &re) {
		return re.ID
	}
	return ""
}

// envelopeRules are the rules CheckEnvelope judges on every answer it reads.
var envelopeRules = []string{"ENV-1", "ENV-2", "ENV-3", "ENV-4", "ENV-5", "ENV-6", "ENV-7"}

// EnvelopeKind is which envelope CheckEnvelope holds an answer to: either,
// by its status; a success one; or an error one.
type EnvelopeKind int

// The envelopes CheckEnvelope tells apart.
const (
	EnvelopeEither EnvelopeKind = iota // the one the status calls for
	EnvelopeOK                         // {"success": true, "data": …}
	EnvelopeFailed                     // {"success": false, "error": …}
)

// CheckEnvelope applies the response envelope of spec sections 4 and 7. The
// messages name the rule, since they are what a report shows first.
func CheckEnvelope(e *wire.Exchange, kind EnvelopeKind) error {
	ok2xx := e.Status >= 200 && e.Status < 300
	switch {
	case kind == EnvelopeOK && !ok2xx:
		return fmt.Errorf("want a successful response (HTTP 200), got HTTP %d", e.Status)
	case kind == EnvelopeFailed && ok2xx:
		return fmt.Errorf("want an error response (non-2xx status), got HTTP %d", e.Status)
	}
	v, err := e.JSON()
	if err != nil {
		return broken("ENV-1", "envelope rule (spec §4): every response is a JSON object; %w", err)
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		return broken("ENV-1", "envelope rule (spec §4): the body must be a JSON object, got %s", wire.Describe(v))
	}
	sv, has := m["success"]
	if !has {
		return broken("ENV-1", "envelope rule (spec §4): \"success\" is missing (keys: %s)", wire.KeysOf(m))
	}
	success, isBool := sv.(bool)
	if !isBool {
		return broken("ENV-1", "envelope rule (spec §4): \"success\" must be a boolean, got %s", wire.Describe(sv))
	}
	if success != ok2xx {
		return broken("ENV-7", "envelope rule (spec §4, §7): \"success\" is %t on HTTP %d; it must be true exactly on success", success, e.Status)
	}
	if success {
		data, has := m["data"]
		if !has {
			return broken("ENV-2", "envelope rule (spec §4): a success must carry \"data\" (keys: %s)", wire.KeysOf(m))
		}
		if _, isObj := data.(map[string]any); !isObj {
			return broken("ENV-2", "envelope rule (spec §4): \"data\" must be an object holding the result, got %s", wire.Describe(data))
		}
		return nil
	}
	ev, has := m["error"]
	if !has {
		return broken("ENV-3", "error rule (spec §7): a failure must carry \"error\" (keys: %s)", wire.KeysOf(m))
	}
	eo, isObj := ev.(map[string]any)
	if !isObj {
		return broken("ENV-3", "error rule (spec §7): \"error\" must be an object, got %s", wire.Describe(ev))
	}
	if c, ok := eo["code"].(string); !ok || c == "" {
		return broken("ENV-4", "error rule (spec §7): \"error.code\" must be a non-empty string, got %s", describeField(eo, "code"))
	}
	if _, ok := eo["message"].(string); !ok {
		return broken("ENV-5", "error rule (spec §7): \"error.message\" must be a string, got %s", describeField(eo, "message"))
	}
	st := eo["status"]
	if !wire.IsType(st, "integer") {
		return broken("ENV-6", "error rule (spec §7): \"error.status\" must be an integer, got %s", describeField(eo, "status"))
	}
	if string(st.(json.Number)) != strconv.Itoa(e.Status) {
		return broken("ENV-6", "error rule (spec §7): \"error.status\" must repeat the HTTP status %d, got %s", e.Status, st)
	}
	return nil
}

func describeField(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return "nothing (the field is missing)"
	}
	return wire.Describe(v)
}

// CheckJSONContentType holds an answer to a JSON media type (ENV-8, ENV-9)
// and a body that is JSON.
func CheckJSONContentType(e *wire.Exchange) error {
	ct := e.Header.Get("Content-Type")
	media := strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
	if media != "application/json" && !strings.HasSuffix(media, "+json") {
		return fmt.Errorf("want Content-Type application/json, got %q", ct)
	}
	if _, err := e.JSON(); err != nil {
		return err
	}
	return nil
}

var millisRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// CheckMillisTimestamp holds the value at path to an RFC 3339 UTC
// timestamp with exactly three fractional digits (ENV-11).
func CheckMillisTimestamp(path string, v any) error {
	s, ok := v.(string)
	if !ok {
		return broken("ENV-11", "timestamp rule: %q must be a string, got %s", path, wire.Describe(v))
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err != nil || !millisRe.MatchString(s) {
		return broken("ENV-11", "timestamp rule: %q must be RFC 3339 in UTC with exactly three fractional digits (2026-01-01T00:00:30.000Z), got %q", path, s)
	}
	return nil
}

// timestampFields visits every non-null field whose name ends in "At".
func timestampFields(path string, v any, visit func(path string, v any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := strings.TrimPrefix(path+"."+k, ".")
			if strings.HasSuffix(k, "At") && c != nil {
				visit(p, c)
			}
			timestampFields(p, c, visit)
		}
	case []any:
		for i, c := range x {
			timestampFields(path+"."+strconv.Itoa(i), c, visit)
		}
	}
}

// CountTimestamps is how many fields of v ENV-11 holds: the non-null fields
// whose names end in "At".
func CountTimestamps(v any) int {
	n := 0
	timestampFields("", v, func(string, any) { n++ })
	return n
}

// CheckTimestamps returns the first timestamp field not in the form of
// ENV-11.
func CheckTimestamps(v any) error {
	var first error
	timestampFields("", v, func(p string, x any) {
		if err := CheckMillisTimestamp(p, x); err != nil && first == nil {
			first = err
		}
	})
	return first
}

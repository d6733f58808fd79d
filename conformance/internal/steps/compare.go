package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// Steps that compare numbers, save headers, wait for asynchronous effects
// and set up sandbox data through the API.

var operandRe = regexp.MustCompile(`^(?:(-?[0-9]+(?:\.[0-9]+)?|true|false)|the saved "([^"]*)"|the header "([^"]*)"|the JSON at "([^"]*)")( in Unix seconds)?(?: (plus|minus) ([0-9]+))?$`)

// scalar is one side of a comparison: a number, an instant or a
// boolean, as read from a JSON value, a header or a literal.
type scalar struct {
	num  *big.Rat
	at   time.Time
	bool *bool
	kind string // "number", "timestamp" or "boolean"
	raw  string
}

// scalarOf reads v as a number (a JSON number or a numeric string, as
// headers are), a timestamp (RFC 3339 text, or an HTTP date as the Date
// header has) or a boolean.
func scalarOf(v any) (scalar, error) {
	switch x := v.(type) {
	case bool:
		return scalar{bool: &x, kind: "boolean", raw: strconv.FormatBool(x)}, nil
	case json.Number:
		if n, ok := new(big.Rat).SetString(string(x)); ok {
			return scalar{num: n, kind: "number", raw: string(x)}, nil
		}
	case string:
		t := strings.TrimSpace(x)
		if n, ok := new(big.Rat).SetString(t); ok && t != "" {
			return scalar{num: n, kind: "number", raw: x}, nil
		}
		if at, err := wire.ParseTimestamp(t); err == nil {
			return scalar{at: at, kind: "timestamp", raw: x}, nil
		}
		if at, err := http.ParseTime(t); err == nil {
			return scalar{at: at, kind: "timestamp", raw: x}, nil
		}
	}
	return scalar{}, fmt.Errorf("%s is neither a number, a timestamp nor a boolean", wire.Describe(v))
}

// unixSeconds turns an instant into the whole seconds since the Unix epoch,
// as Webhook-Timestamp and X-RateLimit-Reset count time.
func (c scalar) unixSeconds() (scalar, error) {
	if c.kind != "timestamp" {
		return c, fmt.Errorf("a %s (%s) is not an instant to count in Unix seconds", c.kind, c.raw)
	}
	return scalar{num: new(big.Rat).SetInt64(c.at.Unix()), kind: "number", raw: strconv.FormatInt(c.at.Unix(), 10)}, nil
}

// plus moves a number by d, or an instant by d seconds.
func (c scalar) plus(d *big.Rat) (scalar, error) {
	switch c.kind {
	case "number":
		c.num = new(big.Rat).Add(c.num, d)
	case "timestamp":
		secs, _ := d.Float64()
		c.at = c.at.Add(time.Duration(secs * float64(time.Second)))
	default:
		return c, fmt.Errorf("a %s cannot be moved by plus or minus", c.kind)
	}
	return c, nil
}

// compare orders two values of one kind; booleans are only equal or not.
func (c scalar) compare(o scalar) (int, error) {
	if c.kind != o.kind {
		return 0, fmt.Errorf("cannot compare a %s (%s) with a %s (%s)", c.kind, c.raw, o.kind, o.raw)
	}
	switch c.kind {
	case "number":
		return c.num.Cmp(o.num), nil
	case "timestamp":
		return c.at.Compare(o.at), nil
	}
	if *c.bool == *o.bool {
		return 0, nil
	}
	return 1, nil
}

// operand reads the right-hand side of a comparison: a literal number or
// boolean, a saved value, a header or a JSON value of the last response,
// optionally read in Unix seconds (a timestamp as a number, to compare
// with a header that counts seconds), and optionally plus or minus a whole
// number (seconds, for a timestamp).
func operand(s *scenarioState, text string) (scalar, error) {
	m := operandRe.FindStringSubmatch(text)
	if m == nil {
		return scalar{}, fmt.Errorf("%w: %q is not a number, true, false, the saved \"…\", the header \"…\" or the JSON at \"…\" (optionally followed by \"in Unix seconds\", then \"plus N\" or \"minus N\")", kit.ErrUsage, text)
	}
	var v any
	switch {
	case m[1] == "true" || m[1] == "false":
		v = m[1] == "true"
	case m[1] != "":
		v = json.Number(m[1])
	case m[2] != "":
		saved, ok := s.saved[m[2]]
		if !ok {
			return scalar{}, fmt.Errorf("nothing saved as %q (known: %s)", m[2], s.savedNames())
		}
		v = saved
	case m[3] != "":
		e, err := s.response()
		if err != nil {
			return scalar{}, err
		}
		raw := e.Header.Get(m[3])
		if raw == "" {
			return scalar{}, fmt.Errorf("the header %s is missing", m[3])
		}
		v = raw
	default:
		x, err := valueAt(s, m[4])
		if err != nil {
			return scalar{}, err
		}
		v = x
	}
	c, err := scalarOf(v)
	if err != nil {
		return c, fmt.Errorf("%s: %w", text, err)
	}
	if m[5] != "" {
		if c, err = c.unixSeconds(); err != nil {
			return c, fmt.Errorf("%s: %w", text, err)
		}
	}
	if m[6] != "" {
		d, _ := new(big.Rat).SetString(m[7])
		if m[6] == "minus" {
			d.Neg(d)
		}
		return c.plus(d)
	}
	return c, nil
}

var comparisons = map[string]func(int) bool{
	"less than":    func(c int) bool { return c < 0 },
	"at most":      func(c int) bool { return c <= 0 },
	"greater than": func(c int) bool { return c > 0 },
	"at least":     func(c int) bool { return c >= 0 },
	"equal to":     func(c int) bool { return c == 0 },
	"not equal to": func(c int) bool { return c != 0 },
}

// compareValue compares a JSON value or header of the last response with an
// operand: numbers by value ("1000" equals "1e3"), timestamps as instants
// (an updatedAt at least its createdAt), booleans as equal or not.
func (s *scenarioState) compareValue(ctx context.Context, kind, name, op, rhs string) error {
	var v any
	if kind == "header" {
		e, err := s.response()
		if err != nil {
			return err
		}
		raw := e.Header.Get(name)
		if raw == "" {
			return fmt.Errorf("the header %s is missing", name)
		}
		v = raw
	} else {
		x, err := valueAt(s, name)
		if err != nil {
			return err
		}
		v = x
	}
	left, err := scalarOf(v)
	if err != nil {
		return fmt.Errorf("the %s %q: %w", kind, name, err)
	}
	right, err := operand(s, rhs)
	if err != nil {
		return err
	}
	c, err := left.compare(right)
	if err == nil && left.kind == "boolean" && op != "equal to" && op != "not equal to" {
		err = fmt.Errorf("%w: booleans are only equal to or not equal to each other", kit.ErrUsage)
	}
	if err != nil {
		return fmt.Errorf("the %s %q: %w", kind, name, err)
	}
	if !comparisons[op](c) {
		if kind == "header" && strings.EqualFold(name, rules.HdrRemaining) && windowEnded(s) {
			s.skip = "a rate-limit window ended between the requests this count spans, so the count restarted"
			return godog.ErrSkip
		}
		return fmt.Errorf("the %s %q is %s; want it %s %s (%s)", kind, name, left.raw, op, rhs, right.String())
	}
	return nil
}

func (c scalar) String() string {
	switch c.kind {
	case "number":
		return c.num.RatString()
	case "timestamp":
		return c.at.UTC().Format(time.RFC3339Nano)
	}
	return c.raw
}

func (s *scenarioState) compareStep(ctx context.Context, kind, name, op, rhs string) error {
	if kind == "JSON at" {
		kind = "JSON"
	}
	return s.compareValue(ctx, kind, name, op, rhs)
}

func (s *scenarioState) headerAbsent(ctx context.Context, name string) error {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return err
	}
	if vs := e.Header.Values(name); len(vs) > 0 {
		return fmt.Errorf("the header %s: want it absent, got %q", name, strings.Join(vs, ", "))
	}
	return nil
}

func (s *scenarioState) saveHeader(ctx context.Context, name, as string) error {
	e, err := s.response()
	if err != nil {
		return err
	}
	v := e.Header.Get(name)
	if v == "" {
		return fmt.Errorf("the header %s is missing", name)
	}
	s.saved[as] = v
	return nil
}

func (s *scenarioState) sendManyWithBody(ctx context.Context, n int, method, path, body string) error {
	for i := 0; i < n; i++ {
		if err := s.sendInline(ctx, method, path, body); err != nil {
			return err
		}
	}
	return nil
}

// pollEvery is how often "within N seconds" steps ask again.
const pollEvery = 100 * time.Millisecond

// eventually sends the request until the JSON at path equals the literal,
// for effects the deployment may apply after answering.
func (s *scenarioState) eventually(ctx context.Context, secs int, method, target, path, literal string) error {
	want, err := wire.ParseLiteral(literal)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	for {
		if err := s.sendPlain(ctx, method, target); err != nil {
			return err
		}
		got, lerr := valueAt(s, path)
		if lerr == nil && wire.MatchDiff(want, got) == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %d seconds the JSON at %q is still %s, want %s", secs, path, describeLookup(got, lerr), literal)
		}
		// Keep only the last answer, so that polling does not grow the history.
		s.history = s.history[:len(s.history)-1]
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

// bugPaths are the shortest moves from "new" to each status, with the
// resolutions the lifecycle needs.
var bugPaths = map[string][]string{
	"new":         nil,
	"confirmed":   {`{"status": "confirmed"}`},
	"in_progress": {`{"status": "confirmed"}`, `{"status": "in_progress"}`},
	"resolved":    {`{"status": "confirmed"}`, `{"status": "resolved", "resolution": "fixed"}`},
	"closed":      {`{"status": "closed", "resolution": "wont_fix"}`},
}

// bugWithStatus makes its own bug through the API and the sandbox controls,
// so that lifecycle checks hold whatever the account was seeded with. It
// saves bugId, campaignId and testerId.
func (s *scenarioState) bugWithStatus(ctx context.Context, status string) error {
	moves, ok := bugPaths[status]
	if !ok {
		return fmt.Errorf("%w: no way to make a bug with status %q (known: new, confirmed, in_progress, resolved, closed)", kit.ErrUsage, status)
	}
	step := func(method, path, body string) (any, error) {
		var b []byte
		if body != "" {
			eb, err := s.expand(body)
			if err != nil {
				return nil, err
			}
			b = []byte(eb)
		}
		p, err := s.expandTarget(path)
		if err != nil {
			return nil, err
		}
		e, err := s.send(ctx, method, p, b, "application/json")
		if err != nil {
			return nil, err
		}
		if e.Status != http.StatusOK {
			return nil, fmt.Errorf("setting up a %s bug: %s %s answered %d", status, method, path, e.Status)
		}
		return e.JSON()
	}
	v, err := step(http.MethodGet, "/v1/testers?limit=1", "")
	if err != nil {
		return err
	}
	tester, err := wire.Lookup(v, "data.items.0.id")
	if err != nil {
		return fmt.Errorf("setting up a %s bug: the account has no tester: %w", status, err)
	}
	platform, err := wire.Lookup(v, "data.items.0.platforms.0")
	if err != nil {
		return fmt.Errorf("setting up a %s bug: %w", status, err)
	}
	s.saved["testerId"] = tester
	v, err = step(http.MethodPost, "/v1/campaigns", fmt.Sprintf(`{"name": "Lifecycle", "platform": %q, "testersRequired": 1, "rewardPerBug": 1}`, platform))
	if err != nil {
		return err
	}
	if s.saved["campaignId"], err = wire.Lookup(v, "data.id"); err != nil {
		return err
	}
	v, err = step(http.MethodPost, "/_sandbox/bugs", `{"campaignId": "{campaignId}", "testerId": "{testerId}", "title": "Lifecycle check", "severity": "high"}`)
	if err != nil {
		return err
	}
	if s.saved["bugId"], err = wire.Lookup(v, "data.id"); err != nil {
		return err
	}
	for _, m := range moves {
		if _, err := step(http.MethodPatch, "/v1/bugs/{bugId}", m); err != nil {
			return err
		}
	}
	return nil
}

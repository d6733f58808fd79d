package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/cucumber/godog"
)

// Steps that compare numbers, save headers, wait for asynchronous effects
// and set up sandbox data through the API.

var operandRe = regexp.MustCompile(`^(?:(-?[0-9]+(?:\.[0-9]+)?)|the saved "([^"]*)"|the header "([^"]*)"|the JSON at "([^"]*)")(?: (plus|minus) ([0-9]+))?$`)

// operand reads the right-hand side of a numeric comparison: a literal, a
// saved value, a header or a JSON value of the last response, optionally
// plus or minus a whole number.
func operand(s *scenarioState, text string) (*big.Rat, string, error) {
	m := operandRe.FindStringSubmatch(text)
	if m == nil {
		return nil, "", fmt.Errorf("%w: %q is not a number, the saved \"…\", the header \"…\" or the JSON at \"…\"", ErrUsage, text)
	}
	var raw string
	switch {
	case m[1] != "":
		raw = m[1]
	case m[2] != "":
		v, ok := s.saved[m[2]]
		if !ok {
			return nil, "", fmt.Errorf("nothing saved as %q (known: %s)", m[2], s.savedNames())
		}
		raw = fmt.Sprint(v)
	case m[3] != "":
		e, err := s.last()
		if err != nil {
			return nil, "", err
		}
		raw = e.header.Get(m[3])
		if raw == "" {
			return nil, "", fmt.Errorf("the header %s is missing", m[3])
		}
	default:
		v, err := valueAt(s, m[4])
		if err != nil {
			return nil, "", err
		}
		raw = fmt.Sprint(v)
	}
	n, ok := new(big.Rat).SetString(strings.TrimSpace(raw))
	if !ok {
		return nil, "", fmt.Errorf("%s is %q, not a number", text, raw)
	}
	if m[5] != "" {
		d, _ := new(big.Rat).SetString(m[6])
		if m[5] == "minus" {
			d.Neg(d)
		}
		n.Add(n, d)
	}
	return n, raw, nil
}

var comparisons = map[string]func(int) bool{
	"less than":    func(c int) bool { return c < 0 },
	"at most":      func(c int) bool { return c <= 0 },
	"greater than": func(c int) bool { return c > 0 },
	"at least":     func(c int) bool { return c >= 0 },
	"equal to":     func(c int) bool { return c == 0 },
	"not equal to": func(c int) bool { return c != 0 },
}

// compareNumber compares a JSON value or header of the last response with
// an operand, as numbers: "1000" and "1e3" are equal, "10" is more than "9".
func compareNumber(ctx context.Context, kind, name, op, rhs string) error {
	s := stateFrom(ctx)
	var raw string
	if kind == "header" {
		e, err := s.last()
		if err != nil {
			return err
		}
		raw = e.header.Get(name)
		if raw == "" {
			return fmt.Errorf("the header %s is missing", name)
		}
	} else {
		v, err := valueAt(s, name)
		if err != nil {
			return err
		}
		if _, ok := v.(json.Number); !ok {
			return fmt.Errorf("the JSON at %q: want a number, got %s", name, describe(v))
		}
		raw = string(v.(json.Number))
	}
	left, ok := new(big.Rat).SetString(strings.TrimSpace(raw))
	if !ok {
		return fmt.Errorf("the %s %q is %q, not a number", kind, name, raw)
	}
	right, _, err := operand(s, rhs)
	if err != nil {
		return err
	}
	if !comparisons[op](left.Cmp(right)) {
		if kind == "header" && strings.EqualFold(name, hdrRemaining) && windowEnded(s) {
			s.skip = "a rate-limit window ended between the requests this count spans, so the count restarted"
			return godog.ErrSkip
		}
		return fmt.Errorf("the %s %q is %s; want it %s %s (%s)", kind, name, raw, op, rhs, right.RatString())
	}
	return nil
}

func compareNumberStep(ctx context.Context, kind, name, op, rhs string) error {
	if kind == "JSON at" {
		kind = "JSON"
	}
	return compareNumber(ctx, kind, name, op, rhs)
}

func headerAbsent(ctx context.Context, name string) error {
	e, err := lastExchange(ctx)
	if err != nil {
		return err
	}
	if vs := e.header.Values(name); len(vs) > 0 {
		return fmt.Errorf("the header %s: want it absent, got %q", name, strings.Join(vs, ", "))
	}
	return nil
}

func saveHeader(ctx context.Context, name, as string) error {
	s := stateFrom(ctx)
	e, err := s.last()
	if err != nil {
		return err
	}
	v := e.header.Get(name)
	if v == "" {
		return fmt.Errorf("the header %s is missing", name)
	}
	s.saved[as] = v
	return nil
}

func sendManyWithBody(ctx context.Context, n int, method, path, body string) error {
	for i := 0; i < n; i++ {
		if err := sendInline(ctx, method, path, body); err != nil {
			return err
		}
	}
	return nil
}

// pollEvery is how often "within N seconds" steps ask again.
const pollEvery = 100 * time.Millisecond

// eventually sends the request until the JSON at path equals the literal,
// for effects the deployment may apply after answering.
func eventually(ctx context.Context, secs int, method, target, path, literal string) error {
	s := stateFrom(ctx)
	want, err := parseLiteral(literal)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Duration(secs) * time.Second)
	for {
		if err := sendPlain(ctx, method, target); err != nil {
			return err
		}
		got, lerr := valueAt(s, path)
		if lerr == nil && matchDiff(want, got) == "" {
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
func bugWithStatus(ctx context.Context, status string) error {
	s := stateFrom(ctx)
	moves, ok := bugPaths[status]
	if !ok {
		return fmt.Errorf("%w: no way to make a bug with status %q (known: new, confirmed, in_progress, resolved, closed)", ErrUsage, status)
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
		if e.status != http.StatusOK {
			return nil, fmt.Errorf("setting up a %s bug: %s %s answered %d", status, method, path, e.status)
		}
		return e.json()
	}
	v, err := step(http.MethodGet, "/v1/testers?limit=1", "")
	if err != nil {
		return err
	}
	tester, err := lookup(v, "data.items.0.id")
	if err != nil {
		return fmt.Errorf("setting up a %s bug: the account has no tester: %w", status, err)
	}
	platform, err := lookup(v, "data.items.0.platforms.0")
	if err != nil {
		return fmt.Errorf("setting up a %s bug: %w", status, err)
	}
	s.saved["testerId"] = tester
	v, err = step(http.MethodPost, "/v1/campaigns", fmt.Sprintf(`{"name": "Lifecycle", "platform": %q, "testersRequired": 1, "rewardPerBug": 1}`, platform))
	if err != nil {
		return err
	}
	if s.saved["campaignId"], err = lookup(v, "data.id"); err != nil {
		return err
	}
	v, err = step(http.MethodPost, "/_sandbox/bugs", `{"campaignId": "{campaignId}", "testerId": "{testerId}", "title": "Lifecycle check", "severity": "high"}`)
	if err != nil {
		return err
	}
	if s.saved["bugId"], err = lookup(v, "data.id"); err != nil {
		return err
	}
	for _, m := range moves {
		if _, err := step(http.MethodPatch, "/v1/bugs/{bugId}", m); err != nil {
			return err
		}
	}
	return nil
}

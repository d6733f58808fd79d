package steps

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// Steps that check response headers; the rate-limit ones are in ratelimit.go.

func (s *scenarioState) headerOf(ctx context.Context, name string) (string, *wire.Exchange, error) {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return "", nil, err
	}
	vs := e.Header.Values(name)
	if len(vs) == 0 {
		return "", e, fmt.Errorf("the header %s is missing", name)
	}
	return strings.Join(vs, ", "), e, nil
}

func (s *scenarioState) headerIs(ctx context.Context, name, want string) error {
	w, err := s.expand(want)
	if err != nil {
		return err
	}
	got, _, err := s.headerOf(ctx, name)
	if err != nil {
		return err
	}
	if got != w {
		return fmt.Errorf("the header %s: want %q, got %q", name, w, got)
	}
	return nil
}

func (s *scenarioState) headerIsNot(ctx context.Context, name, other string) error {
	o, err := s.expand(other)
	if err != nil {
		return err
	}
	got, _, err := s.headerOf(ctx, name)
	if err != nil {
		return err
	}
	if got == o {
		return fmt.Errorf("the header %s: want anything but %q", name, o)
	}
	return nil
}

func (s *scenarioState) headerContains(ctx context.Context, name, want string) error {
	got, _, err := s.headerOf(ctx, name)
	if err != nil {
		return err
	}
	if !strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
		return fmt.Errorf("the header %s: want it to contain %q, got %q", name, want, got)
	}
	return nil
}

func (s *scenarioState) headerPresent(ctx context.Context, name string) error {
	_, _, err := s.headerOf(ctx, name)
	return err
}

func (s *scenarioState) headerInteger(ctx context.Context, name string) error {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return err
	}
	_, err = rules.IntHeader(e, name)
	return err
}

// matchesPattern checks a string of the last response, a header's value or
// a JSON string, against a regular expression (Go syntax, unanchored
// unless the pattern says ^ and $), for formats no other step spells out:
// an id's digits, a header's shape.
func (s *scenarioState) matchesPattern(ctx context.Context, kind, name, pattern string) error {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return fmt.Errorf("%w: the pattern %q: %w", kit.ErrUsage, pattern, err)
	}
	var got string
	if kind == "header" {
		if got, _, err = s.headerOf(ctx, name); err != nil {
			return err
		}
	} else {
		v, err := s.jsonAt(ctx, name)
		if err != nil {
			return err
		}
		text, ok := v.(string)
		if !ok {
			return fmt.Errorf("the JSON at %q: want a string matching %q, got %s", name, pattern, wire.Describe(v))
		}
		got = text
	}
	if !re.MatchString(got) {
		kind = strings.TrimSuffix(kind, " at")
		return fmt.Errorf("the %s %q is %q; want it to match %q", kind, name, got, pattern)
	}
	return nil
}

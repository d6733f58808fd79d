package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/testcampaign/kit/conformance/rules"
	"github.com/testcampaign/kit/conformance/wire"
)

// Steps that check response headers; the rate-limit ones are in ratelimit.go.

func (s *ScenarioState) headerOf(ctx context.Context, name string) (string, *wire.Exchange, error) {
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

func (s *ScenarioState) headerIs(ctx context.Context, name, want string) error {
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

func (s *ScenarioState) headerIsNot(ctx context.Context, name, other string) error {
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

func (s *ScenarioState) headerContains(ctx context.Context, name, want string) error {
	got, _, err := s.headerOf(ctx, name)
	if err != nil {
		return err
	}
	if !strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
		return fmt.Errorf("the header %s: want it to contain %q, got %q", name, want, got)
	}
	return nil
}

func (s *ScenarioState) headerPresent(ctx context.Context, name string) error {
	_, _, err := s.headerOf(ctx, name)
	return err
}

func (s *ScenarioState) headerInteger(ctx context.Context, name string) error {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return err
	}
	_, err = rules.IntHeader(e, name)
	return err
}

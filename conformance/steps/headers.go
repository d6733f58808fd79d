package steps

import (
	"context"
	"fmt"
	"strings"

	"github.com/testcampaign/kit/conformance/rules"
	"github.com/testcampaign/kit/conformance/wire"
)

// Steps that check response headers; the rate-limit ones are in ratelimit.go.

func headerOf(ctx context.Context, name string) (string, *wire.Exchange, error) {
	e, err := lastExchange(ctx)
	if err != nil {
		return "", nil, err
	}
	vs := e.Header.Values(name)
	if len(vs) == 0 {
		return "", e, fmt.Errorf("the header %s is missing", name)
	}
	return strings.Join(vs, ", "), e, nil
}

func headerIs(ctx context.Context, name, want string) error {
	s := stateFrom(ctx)
	w, err := s.expand(want)
	if err != nil {
		return err
	}
	got, _, err := headerOf(ctx, name)
	if err != nil {
		return err
	}
	if got != w {
		return fmt.Errorf("the header %s: want %q, got %q", name, w, got)
	}
	return nil
}

func headerIsNot(ctx context.Context, name, other string) error {
	s := stateFrom(ctx)
	o, err := s.expand(other)
	if err != nil {
		return err
	}
	got, _, err := headerOf(ctx, name)
	if err != nil {
		return err
	}
	if got == o {
		return fmt.Errorf("the header %s: want anything but %q", name, o)
	}
	return nil
}

func headerContains(ctx context.Context, name, want string) error {
	got, _, err := headerOf(ctx, name)
	if err != nil {
		return err
	}
	if !strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
		return fmt.Errorf("the header %s: want it to contain %q, got %q", name, want, got)
	}
	return nil
}

func headerPresent(ctx context.Context, name string) error {
	_, _, err := headerOf(ctx, name)
	return err
}

func headerInteger(ctx context.Context, name string) error {
	e, err := lastExchange(ctx)
	if err != nil {
		return err
	}
	_, err = rules.IntHeader(e, name)
	return err
}

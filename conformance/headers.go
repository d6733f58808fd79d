package conformance

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Steps that check response headers; the rate-limit ones are in ratelimit.go.

func headerOf(ctx context.Context, name string) (string, *exchange, error) {
	e, err := lastExchange(ctx)
	if err != nil {
		return "", nil, err
	}
	vs := e.header.Values(name)
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
	_, err = intHeader(e, name)
	return err
}

// intHeader reads a header the spec types as integer: decimal digits only.
func intHeader(e *exchange, name string) (int, error) {
	vs := e.header.Values(name)
	if len(vs) == 0 {
		return 0, fmt.Errorf("rate-limit rule (spec §8): the header %s is missing", name)
	}
	if len(vs) > 1 {
		return 0, fmt.Errorf("the header %s appears %d times (%q); want one integer", name, len(vs), vs)
	}
	if n, err := strconv.Atoi(vs[0]); err == nil && n < 0 && isIntegerLiteral(vs[0]) {
		return 0, fmt.Errorf("rate-limit rule (spec §8): the header %s is negative (%d); a count of requests is never below zero", name, n)
	}
	if !isIntegerLiteral(vs[0]) || strings.HasPrefix(vs[0], "-") {
		return 0, fmt.Errorf("rate-limit rule (spec §8): the header %s must be an integer, got %q", name, vs[0])
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil {
		return 0, fmt.Errorf("the header %s: %w", name, err)
	}
	return n, nil
}

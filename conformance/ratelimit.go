package conformance

import (
	"context"
	"fmt"
	"time"
)

// The rate-limit headers of spec section 8.
const (
	hdrLimit     = "X-RateLimit-Limit"
	hdrRemaining = "X-RateLimit-Remaining"
	hdrReset     = "X-RateLimit-Reset"
)

// publishedLimits are the per-minute, per-hour and per-day maxima of spec
// section 8; the header may report any one of the windows.
var publishedLimits = [...]int{1000, 10000, 100000}

type rateHeaders struct{ limit, remaining, reset int }

func readRateHeaders(e *exchange) (rateHeaders, error) {
	var h rateHeaders
	var err error
	if h.limit, err = intHeader(e, hdrLimit); err != nil {
		return h, err
	}
	if h.remaining, err = intHeader(e, hdrRemaining); err != nil {
		return h, err
	}
	if h.reset, err = intHeader(e, hdrReset); err != nil {
		return h, err
	}
	return h, nil
}

func lastRateHeaders(ctx context.Context) (rateHeaders, error) {
	e, err := lastExchange(ctx)
	if err != nil {
		return rateHeaders{}, err
	}
	return readRateHeaders(e)
}

func rateHeadersIntegers(ctx context.Context) error {
	_, err := lastRateHeaders(ctx)
	return err
}

func remainingWithinLimit(ctx context.Context) error {
	h, err := lastRateHeaders(ctx)
	if err != nil {
		return err
	}
	if h.remaining > h.limit {
		return fmt.Errorf("rate-limit rule (spec §8): %s %d exceeds %s %d", hdrRemaining, h.remaining, hdrLimit, h.limit)
	}
	return nil
}

func limitPublished(ctx context.Context) error {
	h, err := lastRateHeaders(ctx)
	if err != nil {
		return err
	}
	for _, l := range publishedLimits {
		if h.limit == l {
			return nil
		}
	}
	return fmt.Errorf("rate-limit rule (spec §8): %s must be one of the published limits %v, got %d", hdrLimit, publishedLimits, h.limit)
}

// resetSlack absorbs clock skew between the kit and the deployment.
const resetSlack = 5 * time.Minute

const day = 24 * time.Hour

// resetPlausible accepts every reading of X-RateLimit-Reset the spec leaves
// open (its unit is "not shown"): seconds until the reset, Unix seconds, or
// Unix milliseconds, each at most a day (the longest window) away.
func resetPlausible(ctx context.Context) error {
	h, err := lastRateHeaders(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	lo, hi := now.Add(-resetSlack), now.Add(day+resetSlack)
	r := int64(h.reset)
	switch {
	case r <= int64(day/time.Second):
		return nil // seconds until the window ends
	case r >= lo.Unix() && r <= hi.Unix():
		return nil // Unix seconds
	case r >= lo.UnixMilli() && r <= hi.UnixMilli():
		return nil // Unix milliseconds
	}
	return fmt.Errorf("rate-limit rule (spec §8): %s %d is neither seconds until the reset, nor a Unix time (s or ms) within a day from now (%d)", hdrReset, h.reset, now.Unix())
}

// resetUnixWithin is the sandbox's reading: Unix seconds at the end of the
// reported window.
func resetUnixWithin(ctx context.Context, secs int) error {
	h, err := lastRateHeaders(ctx)
	if err != nil {
		return err
	}
	now := time.Now().Unix()
	if int64(h.reset) < now-1 || int64(h.reset) > now+int64(secs)+1 {
		return fmt.Errorf("%s: want a Unix time in seconds between %d and %d, got %d", hdrReset, now, now+int64(secs), h.reset)
	}
	return nil
}

// ratePair reads the headers of the last two responses and reports whether a
// window visibly ended between them: the reset moved later and the remaining
// count did not go down. Comparisons across such a boundary prove nothing.
func ratePair(ctx context.Context) (prev, last rateHeaders, rolled bool, err error) {
	pe, le, err := stateFrom(ctx).previous()
	if err != nil {
		return prev, last, false, err
	}
	if prev, err = readRateHeaders(pe); err != nil {
		return prev, last, false, fmt.Errorf("previous response: %w", err)
	}
	if last, err = readRateHeaders(le); err != nil {
		return prev, last, false, fmt.Errorf("last response: %w", err)
	}
	rolled = last.reset > prev.reset && last.remaining >= prev.remaining
	return prev, last, rolled, nil
}

func remainingDecreased(ctx context.Context) error {
	prev, last, rolled, err := ratePair(ctx)
	if err != nil || rolled {
		return err
	}
	if last.remaining >= prev.remaining {
		return fmt.Errorf("rate-limit rule (spec §8): %s must count down, but went from %d to %d (reset %d both times)", hdrRemaining, prev.remaining, last.remaining, last.reset)
	}
	return nil
}

func remainingUnchanged(ctx context.Context) error {
	prev, last, rolled, err := ratePair(ctx)
	if err != nil || rolled {
		return err
	}
	if last.remaining != prev.remaining {
		return fmt.Errorf("%s went from %d to %d; want it unchanged", hdrRemaining, prev.remaining, last.remaining)
	}
	return nil
}

func limitUnchanged(ctx context.Context) error {
	prev, last, rolled, err := ratePair(ctx)
	if err != nil || rolled {
		return err
	}
	if last.limit != prev.limit {
		return fmt.Errorf("rate-limit rule (spec §8): %s changed from %d to %d within one window", hdrLimit, prev.limit, last.limit)
	}
	return nil
}

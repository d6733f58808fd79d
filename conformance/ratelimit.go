package conformance

import (
	"context"
	"fmt"
	"net/http"
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

// windows are the lengths of the published windows, in the same order.
var windows = [...]time.Duration{time.Minute, time.Hour, 24 * time.Hour}

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
	_, h, err := lastExchangeRates(ctx)
	return h, err
}

// lastExchangeRates is the last exchange with its rate-limit headers, for
// checks that also need the server's clock.
func lastExchangeRates(ctx context.Context) (*exchange, rateHeaders, error) {
	e, err := lastExchange(ctx)
	if err != nil {
		return nil, rateHeaders{}, err
	}
	h, err := readRateHeaders(e)
	return e, h, err
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

// limitPublished holds the limit in force to the published maxima: spec
// section 8 lists maxima, so a deployment (or a sandbox started with
// -rate-limit-minute 50) may enforce less, never more. The window the
// headers describe is told by how far away the reset is.
func limitPublished(ctx context.Context) error {
	e, h, err := lastExchangeRates(ctx)
	if err != nil {
		return err
	}
	if h.limit < 1 {
		return fmt.Errorf("rate-limit rule (spec §8): %s must be at least 1, got %d", hdrLimit, h.limit)
	}
	most := publishedLimits[len(publishedLimits)-1]
	now, _ := serverClock(e)
	if at, ok := resetInstant(h.reset, now); ok {
		for i, w := range windows {
			if at.Sub(now) <= w+resetSlack {
				most = publishedLimits[i]
				break
			}
		}
	}
	if h.limit > most {
		return fmt.Errorf("rate-limit rule (spec §8): %s %d exceeds the published maximum %d for the window its reset (%d) describes (maxima %v)", hdrLimit, h.limit, most, h.reset, publishedLimits)
	}
	return nil
}

// resetSlack absorbs clock skew between the kit and the deployment.
const resetSlack = 5 * time.Minute

const day = 24 * time.Hour

// resetInstant reads X-RateLimit-Reset in the unit that puts it within a day
// of now: seconds until the reset, Unix seconds or Unix milliseconds.
func resetInstant(reset int, now time.Time) (time.Time, bool) {
	r := int64(reset)
	lo, hi := now.Add(-resetSlack), now.Add(day+resetSlack)
	switch {
	case r <= int64(day/time.Second):
		return now.Add(time.Duration(r) * time.Second), true
	case r >= lo.Unix() && r <= hi.Unix():
		return time.Unix(r, 0), true
	case r >= lo.UnixMilli() && r <= hi.UnixMilli():
		return time.UnixMilli(r), true
	}
	return time.Time{}, false
}

// serverClock estimates the deployment's clock from an answer rather than
// the kit's own, which a frozen or skewed server clock need not match: the
// createdAt of a record the answer just created, else the Date header, else
// the kit's clock. The second value says where the estimate came from.
func serverClock(e *exchange) (time.Time, string) {
	if v, err := e.json(); err == nil && (e.method == "POST" || e.method == "PATCH") {
		for _, p := range []string{"data.updatedAt", "data.createdAt"} {
			if x, err := lookup(v, p); err == nil {
				if s, ok := x.(string); ok {
					if t, err := parseTimestamp(s); err == nil {
						return t, "the " + p + " of the record just written"
					}
				}
			}
		}
	}
	if d := e.header.Get("Date"); d != "" {
		if t, err := http.ParseTime(d); err == nil {
			return t, "the Date header"
		}
	}
	return time.Now(), "the kit's clock"
}

// resetPlausible accepts every reading of X-RateLimit-Reset the spec leaves
// open (its unit is "not shown"): seconds until the reset, Unix seconds, or
// Unix milliseconds, each at most a day (the longest window) after the
// server's clock.
func resetPlausible(ctx context.Context) error {
	e, h, err := lastExchangeRates(ctx)
	if err != nil {
		return err
	}
	now, from := serverClock(e)
	if _, ok := resetInstant(h.reset, now); ok {
		return nil
	}
	return fmt.Errorf("rate-limit rule (spec §8): %s %d is neither seconds until the reset, nor a Unix time (s or ms) within a day of the server's clock (%d, from %s)", hdrReset, h.reset, now.Unix(), from)
}

// resetUnixWithin is the sandbox's reading: Unix seconds at the end of the
// reported window, after the server's clock and at most secs later.
func resetUnixWithin(ctx context.Context, secs int) error {
	e, h, err := lastExchangeRates(ctx)
	if err != nil {
		return err
	}
	t, from := serverClock(e)
	now := t.Unix()
	if int64(h.reset) <= now-1 || int64(h.reset) > now+int64(secs)+1 {
		return fmt.Errorf("%s: want a Unix time in seconds after %d (the server's clock, from %s) and at most %d seconds later, got %d", hdrReset, now, from, secs, h.reset)
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
	// A window ended between the two only if the server's clock at the
	// second answer has reached the first answer's reset; a reset that
	// merely moves later proves nothing.
	if last.reset != prev.reset && last.remaining >= prev.remaining {
		now, _ := serverClock(le)
		if at, ok := resetInstant(prev.reset, now); ok && !now.Add(time.Second).Before(at) {
			rolled = true
		}
		if prev.reset <= int(day/time.Second) && last.reset > prev.reset {
			rolled = true // seconds-until reading: the count restarted
		}
	}
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

// resetOnMinute is the sandbox's fixed windows aligned to the UTC minute:
// the reset of a minute window is a multiple of 60 Unix seconds.
func resetOnMinute(ctx context.Context) error {
	h, err := lastRateHeaders(ctx)
	if err != nil {
		return err
	}
	if h.reset%60 != 0 {
		return fmt.Errorf("%s %d is not on a whole UTC minute (%d seconds past one); windows are aligned to the UTC minute", hdrReset, h.reset, h.reset%60)
	}
	return nil
}

// resetEndsWindow is the sandbox's reading of the reported window: fixed
// windows aligned to UTC, so the reset is the end of the server's current
// minute, hour or day, whichever has the fewest requests left.
func resetEndsWindow(ctx context.Context) error {
	e, h, err := lastExchangeRates(ctx)
	if err != nil {
		return err
	}
	now, from := serverClock(e)
	var ends []int64
	for _, w := range windows {
		// The clock may tick over a boundary between stamping the record
		// and counting the request: a second's slack covers that.
		for _, t := range []time.Time{now, now.Add(time.Second)} {
			end := t.Truncate(w).Add(w).Unix()
			if int64(h.reset) == end {
				return nil
			}
			ends = append(ends, end)
		}
	}
	return fmt.Errorf("%s %d is not the end of the server's current UTC minute, hour or day %v (server's clock %s, from %s)", hdrReset, h.reset, ends, now.UTC().Format(time.RFC3339Nano), from)
}

// windowLeft is how long, by the server's clock, the window an answer
// reports has to run; false when its reset cannot be read.
func windowLeft(e *exchange) (time.Duration, bool) {
	h, err := readRateHeaders(e)
	if err != nil {
		return 0, false
	}
	now, _ := serverClock(e)
	at, ok := resetInstant(h.reset, now)
	if !ok {
		return 0, false
	}
	return at.Sub(now), true
}

// windowEnded says whether, by the server's clock at the scenario's last
// answer, the window an earlier answer of the scenario reported has ended:
// counts compared across it restarted in between.
func windowEnded(s *scenarioState) bool {
	last, err := s.last()
	if err != nil {
		return false
	}
	now, _ := serverClock(last)
	for _, e := range s.history[:len(s.history)-1] {
		h, err := readRateHeaders(e)
		if err != nil {
			continue
		}
		if at, ok := resetInstant(h.reset, now); ok && !now.Before(at) {
			return true
		}
	}
	return false
}

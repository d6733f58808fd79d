package steps

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

func (s *scenarioState) lastRateHeaders(ctx context.Context) (rules.RateHeaders, error) {
	_, h, err := s.lastExchangeRates(ctx)
	return h, err
}

// lastExchangeRates is the last exchange with its rate-limit headers, for
// checks that also need the server's clock.
func (s *scenarioState) lastExchangeRates(ctx context.Context) (*wire.Exchange, rules.RateHeaders, error) {
	e, err := s.lastExchange(ctx)
	if err != nil {
		return nil, rules.RateHeaders{}, err
	}
	h, err := rules.ReadRateHeaders(e)
	return e, h, err
}

func (s *scenarioState) rateHeadersIntegers(ctx context.Context) error {
	_, err := s.lastRateHeaders(ctx)
	return err
}

func (s *scenarioState) remainingWithinLimit(ctx context.Context) error {
	h, err := s.lastRateHeaders(ctx)
	if err != nil {
		return err
	}
	if h.Remaining > h.Limit {
		return fmt.Errorf("rate-limit rule (spec §8): %s %d exceeds %s %d", rules.HdrRemaining, h.Remaining, rules.HdrLimit, h.Limit)
	}
	return nil
}

// limitPublished holds the limit in force to the published maxima: spec
// section 8 lists maxima, so a deployment (or a sandbox started with
// -rate-limit-minute 50) may enforce less, never more. The window the
// headers describe is told by how far away the reset is.
func (s *scenarioState) limitPublished(ctx context.Context) error {
	e, h, err := s.lastExchangeRates(ctx)
	if err != nil {
		return err
	}
	if h.Limit < 1 {
		return fmt.Errorf("rate-limit rule (spec §8): %s must be at least 1, got %d", rules.HdrLimit, h.Limit)
	}
	most := rules.PublishedLimits[len(rules.PublishedLimits)-1]
	now, _ := rules.ServerClock(e)
	if at, ok := rules.ResetInstant(h.Reset, now); ok {
		for i, w := range rules.Windows {
			if at.Sub(now) <= w+rules.ResetSlack {
				most = rules.PublishedLimits[i]
				// A reset on the boundary of a longer UTC window may end
				// that window: in an hour's last minute, an hourly window
				// ends as soon as a minute's would.
				for j := i + 1; j < len(rules.Windows); j++ {
					if onWindowBoundary(at, rules.Windows[j]) {
						most = rules.PublishedLimits[j]
					}
				}
				break
			}
		}
	}
	if h.Limit > most {
		return fmt.Errorf("rate-limit rule (spec §8): %s %d exceeds the published maximum %d for the window its reset (%d) describes (maxima %v)", rules.HdrLimit, h.Limit, most, h.Reset, rules.PublishedLimits)
	}
	return nil
}

// onWindowBoundary says whether t is, within the rounding of a reset given
// in seconds, the start of a UTC window of length w.
func onWindowBoundary(t time.Time, w time.Duration) bool {
	past := t.Sub(t.Truncate(w))
	return past <= 2*time.Second || w-past <= 2*time.Second
}

// resetPlausible accepts every reading of X-RateLimit-Reset the spec leaves
// open (its unit is "not shown"): seconds until the reset, Unix seconds, or
// Unix milliseconds, each at most a day (the longest window) after the
// server's clock.
func (s *scenarioState) resetPlausible(ctx context.Context) error {
	e, h, err := s.lastExchangeRates(ctx)
	if err != nil {
		return err
	}
	now, from := rules.ServerClock(e)
	if at, ok := rules.ResetInstant(h.Reset, now); ok {
		// The server's clock is read to the second at worst (Date): a reset
		// further back than that has already passed.
		if at.Before(now.Add(-2 * time.Second)) {
			return fmt.Errorf("rate-limit rule (spec §8): %s %d is %s before the server's clock (%s, from %s); the time at which the count resets cannot have passed", rules.HdrReset, h.Reset, now.Sub(at).Round(time.Second), now.UTC().Format(time.RFC3339), from)
		}
		return nil
	}
	return fmt.Errorf("rate-limit rule (spec §8): %s %d is neither seconds until the reset, nor a Unix time (s or ms) within a day of the server's clock (%d, from %s)", rules.HdrReset, h.Reset, now.Unix(), from)
}

// resetUnixWithin is the sandbox's reading: Unix seconds at the end of the
// reported window, after the server's clock and at most secs later.
func (s *scenarioState) resetUnixWithin(ctx context.Context, secs int) error {
	e, h, err := s.lastExchangeRates(ctx)
	if err != nil {
		return err
	}
	t, from := rules.ServerClock(e)
	now := t.Unix()
	if int64(h.Reset) <= now-1 || int64(h.Reset) > now+int64(secs)+1 {
		return fmt.Errorf("%s: want a Unix time in seconds after %d (the server's clock, from %s) and at most %d seconds later, got %d", rules.HdrReset, now, from, secs, h.Reset)
	}
	return nil
}

// ratePair reads the headers of the last two responses and reports whether a
// window visibly ended between them: the reset moved later and the remaining
// count did not go down. Comparisons across such a boundary prove nothing.
func (s *scenarioState) ratePair(ctx context.Context) (prev, last rules.RateHeaders, rolled bool, err error) {
	pe, le, err := s.previous()
	if err != nil {
		return prev, last, false, err
	}
	if prev, err = rules.ReadRateHeaders(pe); err != nil {
		return prev, last, false, fmt.Errorf("previous response: %w", err)
	}
	if last, err = rules.ReadRateHeaders(le); err != nil {
		return prev, last, false, fmt.Errorf("last response: %w", err)
	}
	// A window ended between the two only if the server's clock at the
	// second answer has reached the first answer's reset; a reset that
	// merely moves later proves nothing.
	if last.Reset != prev.Reset && last.Remaining >= prev.Remaining {
		now, _ := rules.ServerClock(le)
		if at, ok := rules.ResetInstant(prev.Reset, now); ok && !now.Add(time.Second).Before(at) {
			rolled = true
		}
		if prev.Reset <= int(rules.Day/time.Second) && last.Reset > prev.Reset {
			rolled = true // seconds-until reading: the count restarted
		}
	}
	return prev, last, rolled, nil
}

// fastestRefill is the most requests a second that the published limits
// let a window give back (the minute's 1000, spec §8). The algorithm is not
// shown: a token bucket or a sliding window refills as time passes, so a
// count that did not go down is a deviation only when the requests came too
// close together for a refill to explain it.
const fastestRefill = 1000.0 / 60

// refillTries bounds the requests sent again while the ones so far came too
// far apart to tell a refill from a count that does not go down.
const refillTries = 10

// remainingDecreased holds the last request to have counted. Against a
// deployment that may refill, it sends the same request again until the
// count goes down or the requests since the first of the pair prove it
// never will: n requests over t seconds leave at most t·fastestRefill − n
// (+1 for the whole numbers the header rounds to) more than there was.
func (s *scenarioState) remainingDecreased(ctx context.Context) error {
	first := len(s.history) - 2
	for try := 0; ; try++ {
		prev, last, rolled, err := s.ratePair(ctx)
		if err != nil || rolled {
			return err
		}
		if last.Remaining < prev.Remaining {
			return nil
		}
		start, err := rules.ReadRateHeaders(s.history[first])
		if err != nil {
			return err
		}
		fe, le := s.history[first], s.history[len(s.history)-1]
		sent := len(s.history) - 1 - first
		// The server handled the requests at most this far apart.
		apart := le.Sent.Add(le.Elapsed).Sub(fe.Sent)
		refill := apart.Seconds()*fastestRefill - float64(sent) + 1
		if s.t.Profile == kit.ProfileSandbox || float64(last.Remaining-start.Remaining) >= refill {
			return fmt.Errorf("rate-limit rule (spec §8): %s must count down, but went from %d to %d over %d request(s) within %s (reset %d, then %d)", rules.HdrRemaining, start.Remaining, last.Remaining, sent, apart.Round(time.Millisecond), start.Reset, last.Reset)
		}
		if try == refillTries {
			s.skip = fmt.Sprintf("could not judge: %d requests came too far apart (%s) to tell a refilling limiter from a count that does not go down", sent, apart.Round(time.Millisecond))
			return godog.ErrSkip
		}
		u, err := url.Parse(le.URL)
		if err != nil {
			return err
		}
		if err := s.sendPlain(ctx, le.Method, u.RequestURI()); err != nil {
			return err
		}
	}
}

func (s *scenarioState) remainingUnchanged(ctx context.Context) error {
	prev, last, rolled, err := s.ratePair(ctx)
	if err != nil || rolled {
		return err
	}
	if last.Remaining != prev.Remaining {
		return fmt.Errorf("%s went from %d to %d; want it unchanged", rules.HdrRemaining, prev.Remaining, last.Remaining)
	}
	return nil
}

func (s *scenarioState) limitUnchanged(ctx context.Context) error {
	prev, last, rolled, err := s.ratePair(ctx)
	if err != nil || rolled {
		return err
	}
	if last.Limit != prev.Limit {
		return fmt.Errorf("rate-limit rule (spec §8): %s changed from %d to %d within one window", rules.HdrLimit, prev.Limit, last.Limit)
	}
	return nil
}

// resetOnMinute is the sandbox's fixed windows aligned to the UTC minute:
// the reset of a minute window is a multiple of 60 Unix seconds.
func (s *scenarioState) resetOnMinute(ctx context.Context) error {
	h, err := s.lastRateHeaders(ctx)
	if err != nil {
		return err
	}
	if h.Reset%60 != 0 {
		return fmt.Errorf("%s %d is not on a whole UTC minute (%d seconds past one); windows are aligned to the UTC minute", rules.HdrReset, h.Reset, h.Reset%60)
	}
	return nil
}

// resetEndsWindow is the sandbox's reading of the reported window: fixed
// windows aligned to UTC, so the reset is the end of the server's current
// minute, hour or day, whichever has the fewest requests left.
func (s *scenarioState) resetEndsWindow(ctx context.Context) error {
	e, h, err := s.lastExchangeRates(ctx)
	if err != nil {
		return err
	}
	now, from := rules.ServerClock(e)
	var ends []int64
	for _, w := range rules.Windows {
		// The clock may tick over a boundary between stamping the record
		// and counting the request: a second's slack covers that.
		for _, t := range []time.Time{now, now.Add(time.Second)} {
			end := t.Truncate(w).Add(w).Unix()
			if int64(h.Reset) == end {
				return nil
			}
			ends = append(ends, end)
		}
	}
	return fmt.Errorf("%s %d is not the end of the server's current UTC minute, hour or day %v (server's clock %s, from %s)", rules.HdrReset, h.Reset, ends, now.UTC().Format(time.RFC3339Nano), from)
}

// windowEnded says whether, by the server's clock at the scenario's last
// answer, the window an earlier answer of the scenario reported has ended:
// counts compared across it restarted in between.
func windowEnded(s *scenarioState) bool {
	last, err := s.lastSent()
	if err != nil {
		return false
	}
	now, _ := rules.ServerClock(last)
	for _, e := range s.history[:len(s.history)-1] {
		h, err := rules.ReadRateHeaders(e)
		if err != nil {
			continue
		}
		if at, ok := rules.ResetInstant(h.Reset, now); ok && !now.Before(at) {
			return true
		}
	}
	return false
}

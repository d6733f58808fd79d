package rules

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

// The rate-limit headers of spec section 8.
const (
	HdrLimit     = "X-RateLimit-Limit"
	HdrRemaining = "X-RateLimit-Remaining"
	HdrReset     = "X-RateLimit-Reset"
)

// PublishedLimits are the per-minute, per-hour and per-day maxima of spec
// section 8; the header may report any one of the windows.
var PublishedLimits = [...]int{1000, 10000, 100000}

// Windows are the lengths of the published windows, in the same order.
var Windows = [...]time.Duration{time.Minute, time.Hour, 24 * time.Hour}

// RateHeaders are an answer's X-RateLimit-Limit, -Remaining and -Reset.
type RateHeaders struct{ Limit, Remaining, Reset int }

// ReadRateHeaders reads the three rate-limit headers of e, failing on the
// first that is missing or not an integer.
func ReadRateHeaders(e *wire.Exchange) (RateHeaders, error) {
	var h RateHeaders
	var err error
	if h.Limit, err = IntHeader(e, HdrLimit); err != nil {
		return h, err
	}
	if h.Remaining, err = IntHeader(e, HdrRemaining); err != nil {
		return h, err
	}
	if h.Reset, err = IntHeader(e, HdrReset); err != nil {
		return h, err
	}
	return h, nil
}

// ResetSlack absorbs clock skew between the kit and the deployment.
const ResetSlack = 5 * time.Minute

// Day is the length of the longest published window.
const Day = 24 * time.Hour

// ResetInstant reads X-RateLimit-Reset in the unit that puts it within a day
// of now: seconds until the reset, Unix seconds or Unix milliseconds.
func ResetInstant(reset int, now time.Time) (time.Time, bool) {
	r := int64(reset)
	lo, hi := now.Add(-ResetSlack), now.Add(Day+ResetSlack)
	switch {
	case r <= int64(Day/time.Second):
		return now.Add(time.Duration(r) * time.Second), true
	case r >= lo.Unix() && r <= hi.Unix():
		return time.Unix(r, 0), true
	case r >= lo.UnixMilli() && r <= hi.UnixMilli():
		return time.UnixMilli(r), true
	}
	return time.Time{}, false
}

// ServerClock estimates the deployment's clock from an answer rather than
// the kit's own, which a frozen or skewed server clock need not match: the
// createdAt of a record the answer just created, else the Date header, else
// the kit's clock. The second value says where the estimate came from.
func ServerClock(e *wire.Exchange) (time.Time, string) {
	if v, err := e.JSON(); err == nil && (e.Method == "POST" || e.Method == "PATCH") {
		for _, p := range []string{"data.updatedAt", "data.createdAt"} {
			if x, err := wire.Lookup(v, p); err == nil {
				if s, ok := x.(string); ok {
					if t, err := wire.ParseTimestamp(s); err == nil {
						return t, "the " + p + " of the record just written"
					}
				}
			}
		}
	}
	if d := e.Header.Get("Date"); d != "" {
		if t, err := http.ParseTime(d); err == nil {
			return t, "the Date header"
		}
	}
	return time.Now(), "the kit's clock"
}

// WindowLeft is how long, by the server's clock, the window an answer
// reports has to run; false when its reset cannot be read.
func WindowLeft(e *wire.Exchange) (time.Duration, bool) {
	h, err := ReadRateHeaders(e)
	if err != nil {
		return 0, false
	}
	now, _ := ServerClock(e)
	at, ok := ResetInstant(h.Reset, now)
	if !ok {
		return 0, false
	}
	return at.Sub(now), true
}

// IntHeader reads a header the spec types as integer: decimal digits only.
func IntHeader(e *wire.Exchange, name string) (int, error) {
	vs := e.Header.Values(name)
	if len(vs) == 0 {
		return 0, fmt.Errorf("rate-limit rule (spec §8): the header %s is missing", name)
	}
	if len(vs) > 1 {
		return 0, fmt.Errorf("the header %s appears %d times (%q); want one integer", name, len(vs), vs)
	}
	if n, err := strconv.Atoi(vs[0]); err == nil && n < 0 && wire.IsIntegerLiteral(vs[0]) {
		return 0, fmt.Errorf("rate-limit rule (spec §8): the header %s is negative (%d); a count of requests is never below zero", name, n)
	}
	if !wire.IsIntegerLiteral(vs[0]) || strings.HasPrefix(vs[0], "-") {
		return 0, fmt.Errorf("rate-limit rule (spec §8): the header %s must be an integer, got %q", name, vs[0])
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil {
		return 0, fmt.Errorf("the header %s: %w", name, err)
	}
	return n, nil
}

// LooseRateHeaders reads the three headers as integers, signs allowed: a
// negative count is a deviation to report as such, not a parse error.
func LooseRateHeaders(h http.Header) (RateHeaders, bool) {
	var r RateHeaders
	for _, f := range []struct {
		name string
		to   *int
	}{{HdrLimit, &r.Limit}, {HdrRemaining, &r.Remaining}, {HdrReset, &r.Reset}} {
		n, err := strconv.Atoi(strings.TrimSpace(h.Get(f.name)))
		if err != nil {
			return r, false
		}
		*f.to = n
	}
	return r, true
}

// IsWindowEnd says whether reset (Unix seconds) ends the UTC minute, hour
// or day of now; the clock may tick over between the Date and the count.
func IsWindowEnd(reset int, now time.Time) bool {
	for _, w := range Windows {
		for _, t := range []time.Time{now, now.Add(time.Second)} {
			if t.Truncate(w).Add(w).Unix() == int64(reset) {
				return true
			}
		}
	}
	return false
}

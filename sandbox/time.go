package sandbox

import (
	"fmt"
	"strconv"
	"time"
)

// Time is an instant as records carry it: Unix milliseconds. Eight bytes
// instead of time.Time's twenty-four matter when an account holds a million
// records, and the API never shows more than milliseconds anyway.
type Time int64

// TimeLayout is how the API writes every timestamp: UTC with exactly three
// fractional digits, because some clients' parsers (Swift's
// ISO8601DateFormatter with fractional seconds) accept nothing else.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// At returns t as a Time, truncated to the millisecond.
func At(t time.Time) Time {
	return Time(t.UnixMilli())
}

// Std returns the Time as a UTC time.Time.
func (t Time) Std() time.Time {
	return time.UnixMilli(int64(t)).UTC()
}

// Add returns the Time d later, truncated to the millisecond.
func (t Time) Add(d time.Duration) Time {
	return t + Time(d.Milliseconds())
}

// String formats the Time with TimeLayout.
func (t Time) String() string {
	return t.Std().Format(TimeLayout)
}

// MarshalText writes the Time in TimeLayout. As a TextMarshaler, not a
// json.Marshaler, it is quoted by encoding/json without the validation pass
// that the output of every MarshalJSON goes through: a page of records
// holds several times each.
func (t Time) MarshalText() ([]byte, error) {
	return t.Std().AppendFormat(make([]byte, 0, len(TimeLayout)), TimeLayout), nil
}

// UnmarshalJSON reads any RFC 3339 time.
func (t *Time) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("time %s is not a JSON string", b)
	}
	parsed, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*t = At(parsed)
	return nil
}

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
	b, _ := t.AppendText(make([]byte, 0, len(TimeLayout)))
	return string(b)
}

// MarshalText writes the Time in TimeLayout. As a TextMarshaler, not a
// json.Marshaler, it is quoted by encoding/json without the validation pass
// that the output of every MarshalJSON goes through: a page of records
// holds several times each.
func (t Time) MarshalText() ([]byte, error) {
	return t.AppendText(make([]byte, 0, len(TimeLayout)))
}

// AppendText appends the Time in TimeLayout; by hand for years of four
// digits, as AppendFormat reads any layout but RFC 3339's afresh on every
// call, and a page of records holds dozens of times.
func (t Time) AppendText(b []byte) ([]byte, error) {
	std := t.Std()
	year, month, day := std.Date()
	if year < 0 || year > 9999 {
		return std.AppendFormat(b, TimeLayout), nil
	}
	hour, minute, second := std.Clock()
	b = appendDigits(b, year, 4)
	b = appendDigits(append(b, '-'), int(month), 2)
	b = appendDigits(append(b, '-'), day, 2)
	b = appendDigits(append(b, 'T'), hour, 2)
	b = appendDigits(append(b, ':'), minute, 2)
	b = appendDigits(append(b, ':'), second, 2)
	b = appendDigits(append(b, '.'), std.Nanosecond()/1e6, 3)
	return append(b, 'Z'), nil
}

// appendDigits writes n, which is not negative, zero-padded to width digits
// (at most four).
func appendDigits(b []byte, n, width int) []byte {
	start := len(b)
	b = append(b, "0000"[:width]...)
	for i := len(b) - 1; i >= start; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return b
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

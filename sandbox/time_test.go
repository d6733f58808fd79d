package sandbox

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestTimeAlwaysHasThreeFractionalDigits(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC), `"2026-01-01T00:00:30.000Z"`},
		{time.Date(2026, 1, 1, 0, 0, 10, 370_000_000, time.UTC), `"2026-01-01T00:00:10.370Z"`},
		{time.Date(2026, 1, 1, 0, 0, 10, 999_999_999, time.UTC), `"2026-01-01T00:00:10.999Z"`},
		{time.Date(2026, 1, 1, 2, 0, 0, 0, time.FixedZone("CEST", 2*3600)), `"2026-01-01T00:00:00.000Z"`},
		{time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC), `"1969-12-31T23:59:59.500Z"`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(At(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("At(%v) marshals to %s, %v; want %s", tt.in, got, err, tt.want)
		}
		var back Time
		if err := json.Unmarshal(got, &back); err != nil || back != At(tt.in) {
			t.Errorf("%s unmarshals to %v, %v; want %v", got, back, err, At(tt.in))
		}
	}
}

func TestTimeRefusesWhatIsNotATimestamp(t *testing.T) {
	for _, in := range []string{`12`, `"yesterday"`, `null`, `"2026-01-01"`} {
		var got Time
		if err := json.Unmarshal([]byte(in), &got); err == nil {
			t.Errorf("%s unmarshalled to %v; want an error", in, got)
		}
	}
}

// The hand-written layout says what time.Format says, at the edges of the
// four-digit years and past them.
func TestTimeTextIsTimeLayout(t *testing.T) {
	for _, ms := range []Time{0, -1, 1767323045123, -62135596800000, -62135596800001, 253402300799999, 253402300800000, math.MinInt64, math.MaxInt64} {
		want := ms.Std().Format(TimeLayout)
		if got := ms.String(); got != want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(ms), got, want)
		}
		if got, err := ms.AppendText([]byte("x")); err != nil || string(got) != "x"+want {
			t.Errorf("Time(%d).AppendText = %q, %v; want %q", int64(ms), got, err, "x"+want)
		}
	}
}

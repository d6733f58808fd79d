package sandbox

import (
	"encoding/json"
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

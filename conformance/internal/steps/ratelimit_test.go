package steps

import (
	"testing"
	"time"
)

// TestOnWindowBoundary: an hourly window reported in the hour's last
// minute resets as soon as a minute's would, so its limit is judged
// against the hour's maximum only when the reset is on the hour.
func TestOnWindowBoundary(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		reset  string
		window time.Duration
		want   bool
	}{
		{"2026-11-27T09:00:00Z", time.Hour, true},
		{"2026-11-27T09:00:01.500Z", time.Hour, true}, // seconds until, rounded up
		{"2026-11-27T08:59:59Z", time.Hour, true},
		{"2026-11-27T09:01:00Z", time.Hour, false},
		{"2026-11-27T08:59:00Z", time.Hour, false},
		{"2026-11-28T00:00:00Z", 24 * time.Hour, true},
		{"2026-11-27T09:00:00Z", 24 * time.Hour, false},
	}
	for _, tt := range tests {
		if got := onWindowBoundary(at(tt.reset), tt.window); got != tt.want {
			t.Errorf("onWindowBoundary(%s, %s) = %t, want %t", tt.reset, tt.window, got, tt.want)
		}
	}
}

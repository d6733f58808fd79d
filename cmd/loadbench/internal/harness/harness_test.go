package harness

import (
	"testing"
	"time"
)

func TestSpreadTakesTheHundredthOfAHundredAsP99(t *testing.T) {
	var latencies []time.Duration
	for i := range 100 {
		latencies = append(latencies, time.Duration(100-i)*time.Millisecond)
	}
	s := SpreadOf(latencies)
	if s.N != 100 || s.P50 != 51*time.Millisecond || s.P99 != 100*time.Millisecond || s.Max != 100*time.Millisecond {
		t.Errorf("spread = %+v", s)
	}
}

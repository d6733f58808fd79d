package harness

import (
	"os"
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

func TestPeakRSSSamplesUntilStoppedAndKeepsThePeak(t *testing.T) {
	// The sampler reads once before it first waits, so a stop at once
	// still has a sample.
	stop := PeakRSS(os.Getpid())
	peak := stop()
	if peak <= 0 {
		t.Fatalf("peak %d, want this process's resident memory", peak)
	}
	// A deferred stop beside an explicit one must not panic or lose it.
	if again := stop(); again != peak {
		t.Errorf("a second stop gave %d, the first %d", again, peak)
	}
}

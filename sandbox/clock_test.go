package sandbox_test

import (
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

func TestFrozenClockRunsWhatIsDueWhenMoved(t *testing.T) {
	clock := sandbox.NewFrozenClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fired := make(chan string, 3)
	clock.AfterFunc(time.Minute, func() { fired <- "minute" })
	stop := clock.AfterFunc(2*time.Minute, func() { fired <- "stopped" })
	clock.AfterFunc(time.Hour, func() { fired <- "hour" })
	if n := clock.Waiting(); n != 3 {
		t.Fatalf("%d waiting, want 3", n)
	}
	if !stop() || stop() {
		t.Error("stop reports false for a pending function, or true twice")
	}
	clock.Advance(59 * time.Second)
	if n := clock.Waiting(); n != 2 {
		t.Errorf("%d waiting before any is due, want 2", n)
	}
	clock.Advance(5 * time.Minute)
	select {
	case got := <-fired:
		if got != "minute" {
			t.Errorf("%s ran, want the function due after a minute", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the function due after a minute did not run")
	}
	if n := clock.Waiting(); n != 1 {
		t.Errorf("%d waiting after the minute passed, want the hour's alone", n)
	}
}

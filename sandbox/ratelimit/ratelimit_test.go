package ratelimit

import (
	"sync"
	"testing"
	"time"
)

var start = time.Date(2026, 6, 30, 23, 59, 50, 0, time.UTC)

func TestReportsTheTightestWindow(t *testing.T) {
	l := New(Limits{Minute: 10, Hour: 12, Day: 100})
	minuteEnd := start.Truncate(time.Minute).Add(time.Minute)
	if d := l.Take(start); d.Limit != 10 || d.Remaining != 9 || !d.Reset.Equal(minuteEnd) {
		t.Errorf("first request: %+v, want the minute with 9 left", d)
	}
	for range 8 {
		l.Take(start)
	}
	// After midnight every window starts over.
	if d := l.Take(start.Add(15 * time.Second)); !d.Allowed || d.Limit != 10 || d.Remaining != 9 {
		t.Errorf("new day: %+v", d)
	}
	l = New(Limits{Minute: 10, Hour: 12, Day: 100})
	for range 10 {
		l.Take(start.Add(-5 * time.Minute))
	}
	// 10 used in an earlier minute of the hour: the hour has 2 left and is
	// tighter than the new minute's 9.
	if d := l.Take(start); d.Limit != 12 || d.Remaining != 1 || !d.Reset.Equal(start.Truncate(time.Hour).Add(time.Hour)) {
		t.Errorf("hour tighter: %+v", d)
	}
}

func TestTieGoesToTheShortestWindow(t *testing.T) {
	l := New(Limits{Minute: 5, Hour: 5, Day: 5})
	d := l.Take(start)
	if d.Limit != 5 || d.Remaining != 4 || !d.Reset.Equal(start.Truncate(time.Minute).Add(time.Minute)) {
		t.Errorf("tie reported %+v, want the minute", d)
	}
}

func TestRefusedRequestsAreNotCounted(t *testing.T) {
	l := New(Limits{Minute: 2, Hour: 3, Day: 100})
	at := time.Date(2026, 6, 1, 10, 0, 15, 0, time.UTC)
	l.Take(at)
	l.Take(at)
	for range 5 {
		d := l.Take(at)
		if d.Allowed || d.Remaining != 0 || d.RetryAfter != 45*time.Second {
			t.Fatalf("over the minute limit: %+v", d)
		}
	}
	d := l.Take(at.Add(45 * time.Second))
	if !d.Allowed || d.Limit != 3 || d.Remaining != 0 {
		t.Errorf("next minute: %+v, want allowed with the hour's last request", d)
	}
	d = l.Take(at.Add(50 * time.Second))
	if d.Allowed || d.RetryAfter != time.Hour-50*time.Second-15*time.Second {
		t.Errorf("hour exhausted: %+v", d)
	}
}

func TestPeekCountsNothing(t *testing.T) {
	l := New(Limits{Minute: 2, Hour: 10, Day: 10})
	l.Take(start)
	for range 3 {
		if d := l.Peek(start); !d.Allowed || d.Remaining != 1 {
			t.Fatalf("peek: %+v, want allowed with 1 left", d)
		}
	}
	l.Take(start)
	if d := l.Peek(start); d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 {
		t.Errorf("peek after the last request: %+v, want refused with a retry", d)
	}
}

func TestConcurrentTakesCountEveryRequest(t *testing.T) {
	l := New(Limits{Minute: 500, Hour: 1000, Day: 1000})
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if l.Take(start).Allowed {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != 500 {
		t.Errorf("allowed %d of 800 concurrent requests, want exactly 500", allowed)
	}
}

package webhook_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/webhook"
)

// stallingClock is a dispatcher's clock whose timers never fire, and whose
// timer of the given length, once stopped, holds its stopper until released:
// it holds a retry that its account's clock has fired between leaving the
// scheduled retries and joining the queue.
type stallingClock struct {
	stall    time.Duration
	stopping chan struct{}
	release  chan struct{}
}

func (c *stallingClock) Now() time.Time { return frozen }

func (c *stallingClock) AfterFunc(d time.Duration, _ func()) func() bool {
	if d != c.stall {
		return func() bool { return true }
	}
	return func() bool {
		c.stopping <- struct{}{}
		<-c.release
		return true
	}
}

// A retry made due by a move of the account's clock is never missed by a
// settle asked while it goes from scheduled to queued: a settle answered
// then would say the deliveries are done with the retry still to come.
func TestASettleCountsARetryOnItsWayToTheQueue(t *testing.T) {
	rcv := newReceiver(t, always(http.StatusServiceUnavailable))
	clock := &stallingClock{stall: time.Hour, stopping: make(chan struct{}), release: make(chan struct{})}
	release := sync.OnceFunc(func() { close(clock.release) })
	d := start(t, webhook.Options{Clock: clock, FirstRetry: time.Hour, MaxAttempts: 2})
	t.Cleanup(release)
	account := sandbox.NewFrozenClock(frozen)
	o := d.NewOutbox("acct", account, nil)
	o.Send(event(1), []sandbox.Webhook{hook("whk_000001", rcv.URL)}, nil)
	if s := settled(t, o); !s.Settled || s.Scheduled != 1 {
		t.Fatalf("after the first attempt: %+v, want settled with the retry scheduled", s)
	}
	account.Advance(time.Hour)
	<-clock.stopping
	asked, cancel := context.WithCancel(context.Background())
	cancel()
	if s := o.Settle(asked); s.Settled || s.Queued != 1 {
		t.Errorf("a retry on its way to the queue: %+v, want not settled with it queued", s)
	}
	release()
	if s := settled(t, o); !s.Settled || len(records(o)) != 2 {
		t.Errorf("after the retry: %+v, %d records, want settled with both attempts recorded", s, len(records(o)))
	}
}

package webhook_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/webhook"
)

// BenchmarkSendDropped measures what an API write pays to hand an event
// over when the account's queue is full behind a hanging receiver, so that
// every Send records a drop.
func BenchmarkSendDropped(b *testing.B) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	d := webhook.Start(webhook.Options{Pending: 1, AttemptTimeout: time.Minute})
	defer d.Close()
	o := d.NewOutbox("acct", sandbox.NewFrozenClock(frozen), nil)
	hooks := []sandbox.Webhook{hook("whk_000001", srv.URL)}
	e := event(1)
	b.ReportAllocs()
	for b.Loop() {
		o.Send(e, hooks, nil)
	}
}

// BenchmarkDeliver measures deliveries to a loopback receiver that answers
// 204 at once, from Send to the receiver, spread over accounts. Each
// account's queue is unbounded here so that no delivery is dropped.
func BenchmarkDeliver(b *testing.B) {
	for _, accounts := range []int{1, 64} {
		b.Run(fmt.Sprintf("accounts=%d", accounts), func(b *testing.B) {
			var got atomic.Int64
			all := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if got.Add(1) == int64(b.N) {
					close(all)
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			defer srv.Close()
			d := webhook.Start(webhook.Options{Pending: 1 << 30})
			defer d.Close()
			outboxes := make([]*webhook.Outbox, accounts)
			for i := range outboxes {
				outboxes[i] = d.NewOutbox(fmt.Sprintf("acct%d", i), sandbox.NewFrozenClock(frozen), nil)
			}
			hooks := []sandbox.Webhook{hook("whk_000001", srv.URL)}
			e := event(1)
			b.ResetTimer()
			for n := range b.N {
				outboxes[n%accounts].Send(e, hooks, nil)
			}
			<-all
		})
	}
}

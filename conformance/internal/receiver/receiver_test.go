package receiver

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// deliver posts one event to url and reports the status it was answered
// with on the returned channel.
func deliver(t *testing.T, url string) <-chan int {
	t.Helper()
	answered := make(chan int, 1)
	go func() {
		res, err := http.Post(url, "application/json", strings.NewReader(`{"type":"campaign.created"}`))
		if err != nil {
			t.Error(err)
			answered <- 0
			return
		}
		res.Body.Close()
		answered <- res.StatusCode
	}()
	return answered
}

func arrivals(t *testing.T, e *Endpoint, n int) {
	t.Helper()
	_, _, err := e.Await(t.Context(), n-1, time.Minute, func(int, Delivery) bool { return true }, func() error { return nil })
	if err != nil {
		t.Fatalf("delivery %d did not arrive: %v", n, err)
	}
}

// A held answer keeps the deployment's delivery in flight until the
// scenario releases it, or ends; that is what lets a scenario check a
// settle control without racing the delivery.
func TestHeldAnswersGoOnlyWhenReleased(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r, err := Start(ctx, "127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("release", func(t *testing.T) {
		e, url := r.Open(nil, nil)
		defer r.Close(e)
		e.Hold()
		answered := deliver(t, url)
		arrivals(t, e, 1)
		select {
		case status := <-answered:
			t.Fatalf("a held delivery was answered %d before its release", status)
		default:
		}
		e.Release()
		if status := <-answered; status != http.StatusNoContent {
			t.Fatalf("released delivery answered %d, want 204", status)
		}
		if status := <-deliver(t, url); status != http.StatusNoContent {
			t.Fatalf("a delivery after the release answered %d, want 204", status)
		}
	})

	t.Run("close", func(t *testing.T) {
		e, url := r.Open(nil, nil)
		e.Hold()
		e.FailNext(1, http.StatusInternalServerError)
		answered := deliver(t, url)
		arrivals(t, e, 1)
		r.Close(e)
		if status := <-answered; status != http.StatusInternalServerError {
			t.Fatalf("a delivery held when its scenario ended answered %d, want the 500 it was to get", status)
		}
	})
}

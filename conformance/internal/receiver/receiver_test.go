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

// A scenario makes the deployment meet a network error or a redirect on
// demand: a dropped delivery gets no answer at all, and a redirect has
// somewhere to go, so that a deployment following it shows in the record
// of its attempt.
func TestFailedAnswersAsAsked(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r, err := Start(ctx, "127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	e, url := r.Open(nil, nil)
	defer r.Close(e)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	e.FailNext(1, Dropped)
	if res, err := client.Post(url, "application/json", strings.NewReader(`{}`)); err == nil {
		res.Body.Close()
		t.Fatalf("a dropped delivery was answered %d", res.StatusCode)
	}

	e.FailNext(1, http.StatusFound)
	res, err := client.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") == "" {
		t.Fatalf("a redirect answered %d with Location %q, want 302 with somewhere to go", res.StatusCode, res.Header.Get("Location"))
	}
	if got := len(e.All()); got != 2 {
		t.Fatalf("%d deliveries recorded, want 2", got)
	}
}

package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// Every benchmark runs twice: impl=baseline is a bare net/http handler that
// writes the bytes and headers the sandbox wrote for the same request, so
// impl=sandbox/impl=baseline is the cost of the sandbox itself on whatever
// machine runs it. Compare with: benchstat -col /impl.

const benchKey = "svc_test_bench_0123456789"

// benchRequest is one request of a benchmark. A sequence of them repeats, so
// that writes which change a record can undo themselves.
type benchRequest struct {
	method, target, body string
}

func (r benchRequest) key() string { return r.method + " " + r.target }

// newBenchSandbox is a sandbox whose limits no benchmark reaches, on a frozen
// clock so that repeated requests get the same bytes. It writes its request
// log, as cmd/sandbox does, to a writer that keeps nothing.
func newBenchSandbox(tb testing.TB) http.Handler {
	return sandboxtest.NewHandler(tb, sandboxtest.Options{
		MinuteLimit: math.MaxInt32, HourLimit: math.MaxInt32, DayLimit: math.MaxInt32,
		Now:    time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC),
		Logger: slog.New(httpapi.NewLogHandler(io.Discard, false)),
	})
}

func benchServe(tb testing.TB, h http.Handler, key string, r benchRequest) *httptest.ResponseRecorder {
	req := httptest.NewRequest(r.method, r.target, strings.NewReader(r.body))
	req.Header.Set("Authorization", "Bearer "+key)
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Fatalf("%s: %d %s", r.key(), rec.Code, rec.Body)
	}
	return rec
}

// benchReplay answers each request with the response the sandbox gave it,
// doing only what any handler must: read the body, write headers and bytes.
// A request line with several responses gets them in turn, as the sandbox's
// alternating writes did.
func benchReplay(tb testing.TB, responses map[string][]*httptest.ResponseRecorder) http.Handler {
	var turn atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		recs := responses[r.Method+" "+r.URL.RequestURI()]
		if len(recs) == 0 {
			tb.Errorf("baseline has no response for %s %s", r.Method, r.URL.RequestURI())
			http.NotFound(w, r)
			return
		}
		rec := recs[0]
		if len(recs) > 1 {
			rec = recs[int(turn.Add(1)-1)%len(recs)]
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// benchCases are the in-process benchmarks. setup prepares the sandbox's
// account before the requests are measured.
var benchCases = []struct {
	name  string
	setup []benchRequest
	loop  []benchRequest
}{
	{name: "op=create_campaign", loop: []benchRequest{
		{http.MethodPost, "/v1/campaigns", `{"name":"Checkout flow","platform":"ios","testersRequired":25,"rewardPerBug":19.99}`},
	}},
	{name: "op=get_campaign", loop: []benchRequest{{http.MethodGet, "/v1/campaigns/cmp_000002", ""}}},
	{
		name: "op=list_campaigns",
		// A full page, as a client listing a busy account gets.
		setup: slices.Repeat([]benchRequest{{http.MethodPost, "/v1/campaigns", `{"name":"Filler","platform":"web","testersRequired":5,"rewardPerBug":2.5}`}}, 25),
		loop:  []benchRequest{{http.MethodGet, "/v1/campaigns?limit=20", ""}},
	},
	{name: "op=update_bug", loop: []benchRequest{
		// Resolve and reopen in turn, so every request really changes the bug.
		{http.MethodPatch, "/v1/bugs/bug_000005", `{"status":"resolved","resolution":"fixed"}`},
		{http.MethodPatch, "/v1/bugs/bug_000005", `{"status":"confirmed"}`},
	}},
}

func BenchmarkHandler(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			sandbox := newBenchSandbox(b)
			for _, r := range bc.setup {
				benchServe(b, sandbox, benchKey, r)
			}
			responses := map[string][]*httptest.ResponseRecorder{}
			for _, r := range bc.loop {
				responses[r.key()] = append(responses[r.key()], benchServe(b, sandbox, benchKey, r))
			}
			// The baseline runs first so that benchstat takes it as the base.
			for _, impl := range []struct {
				name string
				h    http.Handler
			}{{"impl=baseline", benchReplay(b, responses)}, {"impl=sandbox", sandbox}} {
				b.Run(impl.name, func(b *testing.B) {
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						benchServe(b, impl.h, benchKey, bc.loop[i%len(bc.loop)])
					}
				})
			}
		})
	}
}

// benchMix is the loopback workload: mostly reads, as SDK test suites make,
// with one create in ten.
var benchMix = []benchRequest{
	{http.MethodGet, "/v1/campaigns?limit=20", ""},
	{http.MethodGet, "/v1/campaigns/cmp_000001", ""},
	{http.MethodGet, "/v1/bugs?status=new", ""},
	{http.MethodGet, "/v1/campaigns?limit=20", ""},
	{http.MethodPost, "/v1/campaigns", `{"name":"Load","platform":"android","testersRequired":3,"rewardPerBug":0.5}`},
	{http.MethodGet, "/v1/campaigns/cmp_000003", ""},
	{http.MethodGet, "/v1/bugs?status=new", ""},
	{http.MethodGet, "/v1/campaigns?limit=20", ""},
	{http.MethodGet, "/v1/campaigns/cmp_000001", ""},
	{http.MethodGet, "/v1/testers", ""},
}

// BenchmarkLoopback sends benchMix over real loopback connections from
// parallel workers sharing one keep-alive client. Each worker has its own
// key, so its account and rate limits are its own.
func BenchmarkLoopback(b *testing.B) {
	sandbox := newBenchSandbox(b)
	responses := map[string][]*httptest.ResponseRecorder{}
	for _, r := range benchMix {
		if _, seen := responses[r.key()]; !seen {
			responses[r.key()] = []*httptest.ResponseRecorder{benchServe(b, sandbox, benchKey, r)}
		}
	}
	for _, impl := range []struct {
		name string
		h    http.Handler
	}{{"impl=baseline", benchReplay(b, responses)}, {"impl=sandbox", sandbox}} {
		b.Run(impl.name, func(b *testing.B) {
			srv := httptest.NewServer(impl.h)
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer client.CloseIdleConnections()
			var workers atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				key := fmt.Sprintf("svc_test_bench_%s_%d", impl.name[len("impl="):], workers.Add(1))
				for i := 0; pb.Next(); i++ {
					if err := benchSend(client, srv.URL, key, benchMix[i%len(benchMix)]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func benchSend(client *http.Client, base, key string, r benchRequest) error {
	req, err := http.NewRequest(r.method, base+r.target, bytes.NewReader([]byte(r.body)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	// Reading to the end lets the connection go back to the pool.
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", r.key(), res.Status)
	}
	return nil
}

package accounts

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testcampaign/kit/sandbox"
)

func TestFaultsHitOnlyTheirRouteAsOftenAsPlanned(t *testing.T) {
	var f Faults
	mustAdd(t, &f, sandbox.FaultSpec{Method: "POST", Path: "/v1/campaigns", Status: 503, Count: 2, Rate: 1})
	mustAdd(t, &f, sandbox.FaultSpec{Method: "GET", Path: "/v1/bugs*", Network: sandbox.NetworkReset, Count: 1, Rate: 1})
	var got []string
	for _, req := range []string{"GET /v1/campaigns", "POST /v1/campaigns", "GET /v1/bugs/bug_000001", "POST /v1/campaigns", "POST /v1/campaigns", "GET /v1/bugs"} {
		method, path, _ := strings.Cut(req, " ")
		if fault, ok := f.Take(method, path); ok {
			got = append(got, req+" "+fault.ID)
		}
	}
	want := []string{"POST /v1/campaigns flt_000001", "GET /v1/bugs/bug_000001 flt_000002", "POST /v1/campaigns flt_000001"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests hit (-want +got):\n%s", diff)
	}
	if left := f.List(); len(left) != 0 {
		t.Errorf("faults used up are still listed: %+v", left)
	}
}

func TestARateHitsTheSameRequestsForTheSameSeed(t *testing.T) {
	hits := func(seed uint64) []int {
		var f Faults
		mustAdd(t, &f, sandbox.FaultSpec{Status: 500, Rate: 0.3, Seed: seed})
		var hit []int
		for i := range 100 {
			if _, ok := f.Take("GET", "/v1/testers"); ok {
				hit = append(hit, i)
			}
		}
		return hit
	}
	first, again, other := hits(7), hits(7), hits(8)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("seed 7 hit other requests the second time (-first +again):\n%s", diff)
	}
	if cmp.Equal(first, other) {
		t.Error("seeds 7 and 8 hit the same requests")
	}
	if len(first) < 15 || len(first) > 45 {
		t.Errorf("a rate of 0.3 hit %d of 100 requests", len(first))
	}
}

func TestFaultsAreBoundedListedAndCleared(t *testing.T) {
	var f Faults
	for range sandbox.MaxFaults {
		mustAdd(t, &f, sandbox.FaultSpec{DelayMS: 10, Count: 1, Rate: 1})
	}
	if _, err := f.Add(sandbox.FaultSpec{DelayMS: 10, Count: 1, Rate: 1}); sandbox.AsError(err).Code != sandbox.ErrLimitReached {
		t.Errorf("fault %d: %v, want LIMIT_REACHED", sandbox.MaxFaults+1, err)
	}
	if n := len(f.List()); n != sandbox.MaxFaults {
		t.Errorf("%d listed, want %d", n, sandbox.MaxFaults)
	}
	if n := f.Clear(); n != sandbox.MaxFaults {
		t.Errorf("Clear() = %d, want %d", n, sandbox.MaxFaults)
	}
	if _, ok := f.Take("GET", "/v1/testers"); ok {
		t.Error("a cleared fault still fired")
	}
}

func mustAdd(t *testing.T, f *Faults, spec sandbox.FaultSpec) {
	t.Helper()
	if _, err := f.Add(spec); err != nil {
		t.Fatal(err)
	}
}

func TestJournalRedactsKeysAndKeepsItsBounds(t *testing.T) {
	const key = "svc_test_journal_secret_1234"
	var l RequestLog
	l.Add(LoggedRequest{
		Method: "POST", Path: "/v1/campaigns", Query: "token=" + key,
		Headers: http.Header{"Authorization": {"Bearer " + key}, "X-Echo": {key}},
		Body:    `{"name":"` + key + `","pad":"` + strings.Repeat("x", MaxLoggedBody) + `"}`,
	})
	got := l.Recent("POST", "/v1/campaigns")
	if len(got) != 1 {
		t.Fatalf("%d entries for POST /v1/campaigns, want 1", len(got))
	}
	entry := got[0]
	hint := sandbox.KeyHint(key)
	if want := "Bearer " + hint; entry.Headers.Get("Authorization") != want {
		t.Errorf("Authorization = %q, want %q", entry.Headers.Get("Authorization"), want)
	}
	for _, s := range []string{entry.Query, entry.Headers.Get("X-Echo"), entry.Body} {
		if strings.Contains(s, key) || !strings.Contains(s, hint) {
			t.Errorf("%.60q keeps the key, or lost its hint", s)
		}
	}
	if len(entry.Body) > MaxLoggedBody || !entry.BodyTruncated {
		t.Errorf("body of %d bytes, truncated %v; want at most %d and marked", len(entry.Body), entry.BodyTruncated, MaxLoggedBody)
	}

	for range 2 * RequestLogSize {
		l.Add(LoggedRequest{Method: "GET", Path: "/v1/bugs", Body: strings.Repeat("y", MaxLoggedBody)})
	}
	all := l.Recent("", "")
	if len(all) > RequestLogSize || l.bytes > MaxRequestLogBytes {
		t.Errorf("journal holds %d entries, %d bytes; want at most %d and %d", len(all), l.bytes, RequestLogSize, MaxRequestLogBytes)
	}
	if len(l.Recent("POST", "")) != 0 {
		t.Error("the oldest entry was kept past the bounds")
	}
}

// A request with more header fields than the journal keeps is logged with
// the first MaxLoggedHeaders of them in name order, whatever order the map
// gives, and marked as cut.
func TestRequestLogKeepsFirstHeadersByName(t *testing.T) {
	h := http.Header{}
	for i := range MaxLoggedHeaders + 8 {
		h.Set(fmt.Sprintf("X-Field-%03d", i), "v")
	}
	var l RequestLog
	l.Add(LoggedRequest{Method: "GET", Path: "/v1/bugs", Headers: h})
	got := l.Recent("", "")[0]
	if !got.HeadersTruncated || len(got.Headers) != MaxLoggedHeaders {
		t.Fatalf("kept %d fields, truncated %v; want %d and true", len(got.Headers), got.HeadersTruncated, MaxLoggedHeaders)
	}
	if got.Headers.Get(fmt.Sprintf("X-Field-%03d", MaxLoggedHeaders-1)) != "v" || got.Headers.Get(fmt.Sprintf("X-Field-%03d", MaxLoggedHeaders)) != "" {
		t.Errorf("kept %v, want the first %d names in order", slices.Sorted(maps.Keys(got.Headers)), MaxLoggedHeaders)
	}
}

// A request too large to keep as it came is cut when it is logged, so the
// journal never holds its whole headers, even before anyone reads it.
func TestJournalCutsALargeRequestAtOnce(t *testing.T) {
	const key = "svc_test_journal_large_5678"
	var l RequestLog
	l.Add(LoggedRequest{Method: "GET", Path: "/v1/bugs", Headers: http.Header{
		"Authorization": {"Bearer " + key}, "X-Pad": {strings.Repeat("p", 4*maxRawEntryBytes)},
	}})
	if l.bytes > maxRawEntryBytes {
		t.Errorf("the journal holds %d bytes for one request, want at most %d", l.bytes, maxRawEntryBytes)
	}
	if l.entries[0].raw || strings.Contains(l.entries[0].Headers.Get("Authorization"), key) {
		t.Error("the large request is kept as it came")
	}
	got := l.Recent("", "")[0]
	if len(got.Headers.Get("X-Pad")) != MaxLoggedText || !got.HeadersTruncated {
		t.Errorf("X-Pad of %d bytes, truncated %v; want %d and true", len(got.Headers.Get("X-Pad")), got.HeadersTruncated, MaxLoggedText)
	}
}

// An entry is kept as its request arrives and completed in place, redacted
// like the rest, however many requests arrived after it.
func TestJournalCompletesEntriesInPlace(t *testing.T) {
	const key = "svc_test_journal_in_place_42"
	var l RequestLog
	first := l.Add(LoggedRequest{Method: "POST", Path: "/v1/campaigns", Pending: true})
	second := l.Add(LoggedRequest{Method: "GET", Path: "/v1/campaigns", Pending: true})
	if got := l.Recent("", ""); len(got) != 2 || !got[0].Pending || !got[1].Pending {
		t.Fatalf("before completion: %+v, want both pending", got)
	}
	l.Complete(second, func(req *LoggedRequest) { req.Pending = false })
	l.Complete(first, func(req *LoggedRequest) { req.Body, req.Pending = `{"name":"`+key+`"}`, false })
	got := l.Recent("", "")
	if len(got) != 2 || got[0].Seq != second || got[1].Seq != first || got[0].Pending || got[1].Pending {
		t.Fatalf("after completion: %+v, want the second then the first, both complete", got)
	}
	if strings.Contains(got[1].Body, key) || !strings.Contains(got[1].Body, sandbox.KeyHint(key)) {
		t.Errorf("completed body %q keeps the key", got[1].Body)
	}
	want := 0
	for _, req := range l.entries {
		want += req.size()
	}
	if l.bytes != want {
		t.Errorf("the journal counts %d bytes, holds %d", l.bytes, want)
	}
}

// A plan is bounded in bytes as the journal is, whatever its fields: as
// many of the largest faults as fit are planned, the next is refused, and
// what the plan dropped is given back.
func TestAPlanIsBoundedInBytes(t *testing.T) {
	var f Faults
	largest := largestFault(0).FaultSpec
	size := largest.Bytes()
	if size < sandbox.MaxFaultBody+sandbox.MaxFaultHeaders*(sandbox.MaxFaultHeaderName+sandbox.MaxFaultHeaderBytes) {
		t.Fatalf("the largest fault counts %d bytes, less than its strings", size)
	}
	fit := sandbox.MaxFaultPlanBytes / size
	for range fit {
		mustAdd(t, &f, largest)
	}
	if _, err := f.Add(largest); sandbox.AsError(err).Code != sandbox.ErrLimitReached {
		t.Errorf("the largest fault after %d: %v, want LIMIT_REACHED", fit, err)
	}
	if _, ok := f.Take("GET", "/v1/testers"); !ok {
		t.Fatal("the planned fault did not fire")
	}
	mustAdd(t, &f, largest)
	f.Clear()
	if f.bytes != 0 {
		t.Errorf("a cleared plan counts %d bytes", f.bytes)
	}
}

// Planned faults are charged to the memory budget: accounts that plan past
// it push the least recently used out, and what a fault held is given back
// when it is spent.
func TestPlannedFaultsCountTowardTheMemoryBudget(t *testing.T) {
	largest := largestFault(0).FaultSpec
	budget := int64(5 * largest.Bytes())
	r := newRegistry(t, Config{Max: 1000, MemoryBudget: budget})
	first := r.Get(key(0))
	for k := range 8 {
		a := r.Get(key(k))
		for range sandbox.MaxFaultPlanBytes / largest.Bytes() {
			if _, err := a.Faults.Add(largest); err != nil {
				t.Fatalf("account %d: %v", k, err)
			}
		}
	}
	if used := r.MemoryUsed(); used > budget {
		t.Errorf("%d bytes counted, over the budget of %d", used, budget)
	}
	if !first.dropped {
		t.Error("the first account was not dropped, although 8 accounts' plans pass a budget of 5 faults")
	}
	last := r.Get(key(7))
	before := r.MemoryUsed()
	last.Faults.Take("GET", "/v1/testers")
	if freed := before - r.MemoryUsed(); freed != int64(largest.Bytes()) {
		t.Errorf("a spent fault gave back %d bytes, want %d", freed, largest.Bytes())
	}
}

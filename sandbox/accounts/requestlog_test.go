package accounts

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/testcampaign/kit/sandbox"
)

// worstRequests are requests as net/http hands them over, each shaped to
// make a journal entry hold as much as it may: the request line, a
// substring of which are the method, path and query, and header values
// each a string of its own.
var worstRequests = map[string]func(i int) LoggedRequest{
	"a 60 KiB header value": func(i int) LoggedRequest {
		line := fmt.Sprintf("GET /v1/campaigns/%06d HTTP/1.1", i)
		return LoggedRequest{Method: line[:3], Path: line[4:24], Headers: http.Header{
			"X-Padding": {strings.Repeat("p", 60<<10) + fmt.Sprint(i)},
		}}
	},
	"an 8 KiB request target": func(i int) LoggedRequest {
		line := fmt.Sprintf("GET /v1/campaigns?q=%s%06d HTTP/1.1", strings.Repeat("q", 8<<10-30), i)
		path, query, _ := strings.Cut(line[4:len(line)-9], "?")
		return LoggedRequest{Method: line[:3], Path: path, Query: query}
	},
	"many short header fields": func(i int) LoggedRequest {
		h := http.Header{}
		for f := range 200 {
			h[fmt.Sprintf("X-F%03d", f)] = []string{fmt.Sprint(i)}
		}
		return LoggedRequest{Method: "GET", Path: "/v1/testers", Headers: h}
	},
	"a fault of the largest body and headers": func(i int) LoggedRequest {
		fault := largestFault(i)
		return LoggedRequest{Method: "GET", Path: "/v1/testers", Fault: &fault}
	},
	"a raw entry just under the cut": func(i int) LoggedRequest {
		return LoggedRequest{Method: "POST", Path: "/v1/campaigns", Body: strings.Repeat("b", MaxLoggedBody),
			Headers: http.Header{"User-Agent": {strings.Repeat("u", 1500) + fmt.Sprint(i)}}}
	},
}

// largestFault is a fault as large as its fields' bounds allow, every
// string its own, as when a key plans fault after fault, each hitting one
// request.
func largestFault(i int) sandbox.Fault {
	body := strings.Repeat("b", sandbox.MaxFaultBody-10) + fmt.Sprintf("%010d", i)
	headers := map[string]string{}
	for h := range sandbox.MaxFaultHeaders {
		name := fmt.Sprintf("X-%03d-%s", h, strings.Repeat("n", sandbox.MaxFaultHeaderName-6))
		headers[name] = strings.Repeat("v", sandbox.MaxFaultHeaderBytes-10) + fmt.Sprintf("%010d", i)
	}
	return sandbox.Fault{ID: fmt.Sprintf("flt_%06d", i), FaultSpec: sandbox.FaultSpec{Status: 500, Body: &body, Headers: headers, Count: 1, Rate: 1}}
}

// The journal is documented to hold at most MaxRequestLogBytes an account;
// what it really keeps on the heap may exceed that by a quarter at most,
// before and after it has been read.
func TestRequestLogHeapStaysWithinItsBoundPerAccount(t *testing.T) {
	if testing.Short() {
		t.Skip("fills the journals of 16 accounts")
	}
	const accounts = 16
	const bound = MaxRequestLogBytes * 5 / 4
	for name, request := range worstRequests {
		t.Run(name, func(t *testing.T) {
			logs := make([]RequestLog, accounts)
			before := heapLive()
			for a := range logs {
				for i := range RequestLogSize {
					logs[a].Add(request(a*RequestLogSize + i))
				}
			}
			written := heapLive()
			for a := range logs {
				logs[a].Recent("", "")
			}
			read := heapLive()
			runtime.KeepAlive(logs)
			t.Logf("heap per account: %d bytes as written, %d once read (bound %d)", (int64(written)-int64(before))/accounts, (int64(read)-int64(before))/accounts, bound)
			for phase, after := range map[string]uint64{"as written": written, "once read": read} {
				if per := (int64(after) - int64(before)) / accounts; per > bound {
					t.Errorf("%s: %d bytes of heap per account, over %d (1.25 × %d)", phase, per, bound, MaxRequestLogBytes)
				}
			}
		})
	}
}

func TestAJournalCountsTowardTheMemoryBudget(t *testing.T) {
	const budget = 1 << 20
	r := newRegistry(t, Config{Max: 1000, MemoryBudget: budget})
	first := r.Get(key(0))
	request := worstRequests["a 60 KiB header value"]
	for k := range 40 {
		a := r.Get(key(k))
		for i := range RequestLogSize {
			a.Requests.Add(request(i))
		}
	}
	if used := r.MemoryUsed(); used > budget {
		t.Errorf("%d bytes counted, over the budget of %d", used, budget)
	}
	if _, held := r.Held(key(0)); held {
		t.Error("the least recently used account is held although 40 full journals pass the budget")
	}
	if !first.dropped {
		t.Error("the first account was not dropped")
	}
}

// heapLive is the bytes of the objects reachable after a collection.
func heapLive() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// The log keeps each entry's measure, so that adding, completing and
// dropping entries does not walk their fields again; it must still be what
// the entries measure, or the journal's bound drifts with every request.
func TestTheJournalsCountIsWhatItsEntriesMeasure(t *testing.T) {
	for name, worst := range worstRequests {
		t.Run(name, func(t *testing.T) {
			var l RequestLog
			for i := range RequestLogSize + 50 {
				seq := l.Add(worst(i))
				if i%3 == 0 {
					_ = l.Recent("", "")
				}
				status := 201
				l.Complete(seq, func(req *LoggedRequest) {
					req.Body, req.Status, req.Pending = strings.Repeat("r", i%(2*MaxLoggedBody)), &status, false
				})
				if i%7 == 0 {
					l.Complete(seq, func(req *LoggedRequest) { req.DeliveryFaults = append(req.DeliveryFaults, req.DeliveryFaults...) })
				}
			}
			measured := 0
			for _, req := range l.entries {
				measured += req.size()
			}
			if l.bytes != measured {
				t.Errorf("the log counts %d bytes; its %d entries measure %d", l.bytes, len(l.entries), measured)
			}
		})
	}
}

package conformance_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox/httpapi"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// limitProofs break one rule each of rate limits, the browser's CORS, the controls, reset and the clock (RATE, WEB, CTL, RESET, CLK).
func limitProofs() []proof {
	return []proof{
		{
			name: "GET /v1/bugs answered without X-RateLimit-Reset", rule: "RATE-1",
			caught: []string{"GET /v1/bugs carries the rate-limit headers as integers"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(req *http.Request, _ int, h http.Header) {
					if isGet(req, "/v1/bugs") {
						h.Del("X-RateLimit-Reset")
					}
				})
			},
		},
		{
			name: "a minute's limit of 1200", rule: "RATE-2",
			caught: []string{"The limit in force does not exceed the published limits"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(req *http.Request, _ int, h http.Header) {
					if inAPI(req) && h.Get("X-RateLimit-Limit") == "1000" {
						h.Set("X-RateLimit-Limit", "1200")
						h.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(h, "X-RateLimit-Remaining")+200))
					}
				})
			},
		},
		{
			name: "a remaining count one above the limit on every fifth answer", rule: "RATE-3",
			wrap: func(next http.Handler) http.Handler {
				var answers perKey
				return editHeaders(next, func(req *http.Request, _ int, h http.Header) {
					if h.Get("X-RateLimit-Limit") != "" && answers.add(bearer(req), 1)%5 == 0 {
						h.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(h, "X-RateLimit-Limit")+1))
					}
				})
			},
		},
		{
			name: "a reset two days away", rule: "RATE-4",
			caught: []string{"The reset time is plausible in every reading of its unit"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(_ *http.Request, _ int, h http.Header) {
					if h.Get("X-RateLimit-Reset") != "" {
						h.Set("X-RateLimit-Reset", strconv.Itoa(intHeader(h, "X-RateLimit-Reset")+2*86400))
					}
				})
			},
		},
		{
			name: "a rolling minute from each request", rule: "RATE-6",
			caught: []string{"The minute window ends on a whole UTC minute"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(_ *http.Request, _ int, h http.Header) {
					if date, err := http.ParseTime(h.Get("Date")); err == nil && h.Get("X-RateLimit-Reset") != "" {
						h.Set("X-RateLimit-Reset", strconv.FormatInt(offTheMinute(date.Unix()+60), 10))
					}
				})
			},
		},
		{
			name: "a budget kept per spelling of the Authorization header", rule: "RATE-6",
			caught: []string{"One key is one budget, however its Authorization header is spelt"},
			wrap: splitBudget(func(req *http.Request) (string, string, bool) {
				spelling := req.Header.Get("Authorization")
				words := strings.Fields(spelling)
				if len(words) == 0 {
					return "", "", false
				}
				return words[len(words)-1], spelling, true
			}),
		},
		{
			name: "a budget counted per path", rule: "RATE-7",
			caught: []string{"GET /v1/campaigns uses one unit of the window"},
			wrap:   splitBudget(func(req *http.Request) (string, string, bool) { return bearer(req), req.URL.Path, true }),
		},
		{
			name: "errors answered without the rate-limit headers", rule: "RATE-8",
			caught: []string{"GET /v1/campaigns/cmp_conform_no_such carries the rate-limit headers, errors included"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(req *http.Request, status int, h http.Header) {
					if inAPI(req) && status >= 400 && h.Get("X-Sandbox-Fault") == "" {
						for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Scope"} {
							h.Del(name)
						}
					}
				})
			},
		},
		{
			// Half a minute, not a whole one: a reset one minute late is the
			// end of the hour when the run meets minute 58, and holds.
			name: "a reset half a minute past the window's end", rule: "RATE-10",
			caught: []string{"A fresh account reports its window's end in Unix seconds"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(_ *http.Request, _ int, h http.Header) {
					if h.Get("X-RateLimit-Reset") != "" {
						h.Set("X-RateLimit-Reset", strconv.Itoa(intHeader(h, "X-RateLimit-Reset")+30))
					}
				})
			},
		},
		{
			name: "a request past the limit answered as if within it", rule: "RATE-5", opts: frozen,
			caught: []string{"A spent window is refused with 429 RATE_LIMIT_EXCEEDED for the key until the clock moves past it"},
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				last := map[string][]byte{}
				return breaking(next, nil, func(req *http.Request, r *response) {
					at := bearer(req) + " " + req.URL.RequestURI()
					mu.Lock()
					defer mu.Unlock()
					switch {
					case req.Method != http.MethodGet || !inAPI(req):
					case r.status == http.StatusOK:
						last[at] = r.body
					case r.status == http.StatusTooManyRequests && r.header.Get("X-Sandbox-Fault") == "" && last[at] != nil:
						r.status, r.body = http.StatusOK, last[at]
						r.header.Del("Retry-After")
					}
				})
			},
		},
		{
			name: "a spent window's 429 without Retry-After", rule: "RATE-11", opts: frozen,
			caught: []string{"A spent window is refused with 429 RATE_LIMIT_EXCEEDED for the key until the clock moves past it"},
			wrap:   spentWindowWithout("Retry-After"),
		},
		{
			name: "a spent window's 429 without X-RateLimit-Scope", rule: "RATE-14", opts: frozen,
			caught: []string{"A spent window is refused with 429 RATE_LIMIT_EXCEEDED for the key until the clock moves past it"},
			wrap:   spentWindowWithout("X-RateLimit-Scope"),
		},
		{
			name: "a clock move that keeps the window's count", rule: "RATE-16", opts: frozen,
			caught: []string{"Events, bug changes and rate-limit windows follow a moved clock"},
			wrap: func(next http.Handler) http.Handler {
				var spent, carried perKey
				return breaking(next, nil, func(req *http.Request, r *response) {
					key := bearer(req)
					switch {
					case req.URL.Path == "/_sandbox/clock" && req.Method == http.MethodPost && r.status == http.StatusOK:
						n := spent.add(key, 0)
						spent.add(key, -n)
						carried.add(key, n)
					case req.URL.Path == "/_sandbox/reset":
						spent.add(key, -spent.add(key, 0))
						carried.add(key, -carried.add(key, 0))
					case inAPI(req) && r.header.Get("X-RateLimit-Remaining") != "" && r.status != http.StatusTooManyRequests:
						spent.add(key, 1)
						if n := carried.add(key, 0); n > 0 {
							r.header.Set("X-RateLimit-Remaining", strconv.Itoa(max(intHeader(r.header, "X-RateLimit-Remaining")-n, 0)))
						}
					}
				})
			},
		},
		{
			name: "429s without X-RateLimit-Scope", rule: "RATE-14",
			caught: []string{"A quick 429 through an injected fault carries Retry-After"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(_ *http.Request, status int, h http.Header) {
					if status == http.StatusTooManyRequests {
						h.Del("X-RateLimit-Scope")
					}
				})
			},
		},
		{
			name: "Access-Control-Allow-Origin: * on every answer, no origin listed", rule: "WEB-1",
			caught: []string{"A script of another origin is let in wholly, or no Access-Control header is sent"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(_ *http.Request, _ int, h http.Header) {
					h.Set("Access-Control-Allow-Origin", "*")
				})
			},
		},
		{
			name: "the origin let in on errors only", rule: "WEB-1",
			caught: []string{"A script of another origin is let in wholly, or no Access-Control header is sent"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(req *http.Request, status int, h http.Header) {
					if origin := req.Header.Get("Origin"); origin != "" && status >= 400 {
						h.Set("Access-Control-Allow-Origin", origin)
						h.Set("Access-Control-Expose-Headers", "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Scope, Retry-After, X-Sandbox-Fault")
					}
				})
			},
		},
		{
			name: "every origin let in (-cors-origins *)", opts: sandboxtest.Options{CORS: httpapi.CORS{Origins: []string{"*"}}},
			wrap: func(next http.Handler) http.Handler { return next },
		},
		{
			name: "the controls answered without rate-limit headers", rule: "CTL-2",
			caught: []string{"The controls carry their own budget's headers"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(req *http.Request, _ int, h http.Header) {
					if strings.HasPrefix(req.URL.Path, "/_sandbox/") {
						for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Scope"} {
							h.Del(name)
						}
					}
				})
			},
		},
		{
			name: "a filed bug answered as confirmed", rule: "CTL-4",
			caught: []string{"A filed bug is new, unresolved and announced"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/bugs" && r.status == http.StatusOK {
					r.data(func(d map[string]any) { d["status"] = "confirmed" })
				}
			}),
		},
		{
			name: "a bug filed without a tester goes to the newest tester", rule: "CTL-5",
			caught: []string{"Without a tester named, the oldest tester on the campaign's platform files the bug"},
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/bugs" {
					rewriteBody(req, func(m map[string]any) {
						if _, named := m["testerId"]; !named {
							// The seed's newest tester, on every platform.
							m["testerId"] = "tst_000005"
						}
					})
				}
			}),
		},
		{
			name: "an unknown campaign of a filed bug is 404", rule: "CTL-6",
			caught: []string{"Filing a bug with an unknown campaign is refused, naming campaignId"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Path == "/_sandbox/bugs" && r.status == http.StatusBadRequest && strings.Contains(string(r.body), `"campaignId"`) {
					r.status = http.StatusNotFound
					r.body = []byte(`{"success":false,"error":{"code":"NOT_FOUND","message":"campaign not found","status":404}}`)
				}
			}),
		},
		{
			name: "a reset answered with an empty object", rule: "RESET-1",
			caught: []string{"A reset gives back the seeded records and starts IDs over"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Path == "/_sandbox/reset" && r.status == http.StatusOK {
					r.data(func(d map[string]any) { delete(d, "reset") })
				}
			}),
		},
		{
			name: "a campaign written before a reset still read after it", rule: "RESET-2",
			caught: []string{"A reset gives back the seeded records and starts IDs over"},
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				written := map[string]map[string][]byte{}
				return breaking(next, nil, func(req *http.Request, r *response) {
					key := bearer(req)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" && r.status == http.StatusOK:
						var in struct{ Data struct{ ID string } }
						if json.Unmarshal(r.body, &in) == nil {
							if written[key] == nil {
								written[key] = map[string][]byte{}
							}
							written[key]["/v1/campaigns/"+in.Data.ID] = r.body
						}
					case req.Method == http.MethodGet && r.status == http.StatusNotFound && written[key][req.URL.Path] != nil:
						r.status, r.body = http.StatusOK, written[key][req.URL.Path]
					}
				})
			},
		},
		{
			name: "a reset that keeps the moved clock", rule: "RESET-6", opts: frozen,
			caught: []string{"A reset starts the clock over at the frozen instant"},
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				moved := map[string]time.Duration{}
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					key := bearer(req)
					switch {
					case req.URL.Path == "/_sandbox/clock" && req.Method == http.MethodPost && r.status == http.StatusOK:
						var in struct{ Advance string }
						_ = json.Unmarshal(body, &in)
						d, _ := time.ParseDuration(in.Advance)
						mu.Lock()
						moved[key] += d
						mu.Unlock()
					case req.URL.Path == "/_sandbox/reset" && r.status == http.StatusOK:
						mu.Lock()
						d := moved[key]
						mu.Unlock()
						if d > 0 {
							sideRequest(next, key, http.MethodPost, "/_sandbox/clock", `{"advance":"`+d.String()+`"}`)
						}
					}
				})
			},
		},
		{
			name: "each new account starts a second later than the one before", rule: "CLK-1", opts: frozen,
			caught: []string{"Every account starts at the same frozen instant"},
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				seen := map[string]bool{}
				return breaking(next, func(req *http.Request) {
					key := bearer(req)
					mu.Lock()
					first := !seen[key]
					seen[key] = true
					n := len(seen)
					mu.Unlock()
					if first && strings.HasPrefix(key, "svc_test_") {
						sideRequest(next, key, http.MethodPost, "/_sandbox/clock", `{"advance":"`+strconv.Itoa(n)+`s"}`)
					}
				}, nil)
			},
		},
		{
			name: "a move of 8785h taken as 366 days", rule: "CLK-5", opts: frozen,
			caught: []string{"A move must be a positive duration of at most 366 days: \"8785h\""},
			wrap: asks(func(req *http.Request) {
				if req.URL.Path == "/_sandbox/clock" && req.Method == http.MethodPost {
					rewriteBody(req, func(m map[string]any) {
						if d, err := time.ParseDuration(toString(m["advance"])); err == nil && d > 366*24*time.Hour {
							m["advance"] = "8784h"
						}
					})
				}
			}),
		},
		{
			name: "a new campaign stamped with the machine's clock", rule: "CLK-7", opts: frozen,
			caught: []string{"A move shifts the account's time by exactly the advance"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" && r.status == http.StatusOK {
					now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
					r.data(func(d map[string]any) { d["createdAt"], d["updatedAt"] = now, now })
				}
			}),
		},
	}
}

// spentWindowWithout is a deployment whose 429s for a spent window leave
// out the header name; a fault's 429s keep it.
func spentWindowWithout(name string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return editHeaders(next, func(_ *http.Request, status int, h http.Header) {
			if status == http.StatusTooManyRequests && h.Get("X-Sandbox-Fault") == "" {
				h.Del(name)
			}
		})
	}
}

// splitBudget is a deployment that keeps a budget of its own for each part
// of a key's /v1 requests: its answers count only the requests of the part
// they answer. part names the key and the part, or says the request counts
// for none.
func splitBudget(part func(req *http.Request) (key, part string, ok bool)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		var mu sync.Mutex
		spent := map[string]map[string]int{}
		return editHeaders(next, func(req *http.Request, status int, h http.Header) {
			if !inAPI(req) || h.Get("X-RateLimit-Remaining") == "" || status == http.StatusTooManyRequests {
				return
			}
			key, own, ok := part(req)
			if !ok {
				return
			}
			mu.Lock()
			if spent[key] == nil {
				spent[key] = map[string]int{}
			}
			spent[key][own]++
			total := 0
			for _, n := range spent[key] {
				total += n
			}
			ownSpent := spent[key][own]
			mu.Unlock()
			h.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(h, "X-RateLimit-Remaining")+total-ownSpent))
		})
	}
}

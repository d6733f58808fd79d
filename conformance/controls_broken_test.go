package conformance_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// eachItem lets edit change every item of a list answer's data.items.
func (r *response) eachItem(edit func(it map[string]any)) {
	r.data(func(d map[string]any) {
		items, _ := d["items"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				edit(m)
			}
		}
	})
}

// keepItems keeps the items of a list answer for which keep holds.
func (r *response) keepItems(keep func(it map[string]any) bool) {
	r.data(func(d map[string]any) {
		items, _ := d["items"].([]any)
		kept := []any{}
		for _, it := range items {
			if m, ok := it.(map[string]any); ok && keep(m) {
				kept = append(kept, it)
			}
		}
		d["items"] = kept
	})
}

func isGet(req *http.Request, path string) bool {
	return req.Method == http.MethodGet && req.URL.Path == path
}

// plusSeconds moves an RFC 3339 timestamp held in a JSON value.
func plusSeconds(v any, secs int) any {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(toString(v)))
	if err != nil {
		return v
	}
	return t.Add(time.Duration(secs) * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

// perKey counts something per key for a broken deployment: an API key,
// or a webhook and its delivery's Webhook-Id.
type perKey struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *perKey) add(key string, d int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n = map[string]int{}
	}
	p.n[key] += d
	return p.n[key]
}

// cachedItems keeps, per key, the items of a list read just before a reset,
// for a deployment whose reset forgets to clear them.
type cachedItems struct {
	mu    sync.Mutex
	items map[string][]any
}

func (c *cachedItems) keep(next http.Handler, key, target string) {
	rec := sideRequest(next, key, http.MethodGet, target, "")
	var body struct {
		Data struct {
			Items []any `json:"items"`
		} `json:"data"`
	}
	if json.Unmarshal(rec.Body.Bytes(), &body) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = map[string][]any{}
	}
	c.items[key] = append(c.items[key], body.Data.Items...)
}

func (c *cachedItems) appendTo(key string, r *response) {
	c.mu.Lock()
	stale := c.items[key]
	c.mu.Unlock()
	if len(stale) == 0 {
		return
	}
	r.data(func(d map[string]any) {
		items, _ := d["items"].([]any)
		d["items"] = append(items, stale...)
	})
}

var frozen = sandboxtest.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}

// controlProofs break one documented rule each of the controls (EVT, DLV,
// CLK, RESET, CTL, JRNL).
func controlProofs() []proof {
	return []proof{
		{
			name: "bug changes left out of the events list", rule: "EVT-1",
			caught: []string{"Each write emits one event of its kind, newest first, carrying the record as answered"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/events") {
					r.keepItems(func(it map[string]any) bool { return it["type"] != "bug.updated" })
				}
			}),
		},
		{
			name: "an event carries the record as it was before the change", rule: "EVT-2",
			caught: []string{"Each write emits one event of its kind, newest first, carrying the record as answered"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/events") {
					r.eachItem(func(it map[string]any) {
						if d, ok := it["data"].(map[string]any); ok && it["type"] == "bug.updated" && d["status"] == "confirmed" {
							d["status"] = "new"
						}
					})
				}
			}),
		},
		{
			name: "events listed oldest first", rule: "EVT-4",
			caught: []string{"Each write emits one event of its kind, newest first, carrying the record as answered"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/events") {
					r.data(func(d map[string]any) {
						items, _ := d["items"].([]any)
						slices.Reverse(items)
					})
				}
			}),
		},
		{
			name: "a failed attempt recorded as a success", rule: "DLV-14",
			caught: []string{"A failed attempt is recorded with the receiver's status and when the next is due"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/deliveries") {
					r.eachItem(func(it map[string]any) {
						if toString(it["error"]) != "" {
							it["statusCode"], it["error"] = json.Number("200"), ""
						}
					})
				}
			}),
		},
		{
			name: "retries recorded one second apart, not doubling", rule: "DLV-11",
			caught: []string{"Each retry waits twice as long as the one before"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/deliveries") {
					r.eachItem(func(it map[string]any) {
						if it["nextAttemptAt"] != nil {
							it["nextAttemptAt"] = plusSeconds(it["at"], 1)
						}
					})
				}
			}),
		},
		{
			name: "a failed attempt's error names the address", rule: "DLV-16",
			caught: []string{"A destination nobody answers on is recorded with a generic reason, never the address"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/deliveries") {
					r.eachItem(func(it map[string]any) {
						if it["error"] == "connection refused" {
							it["error"] = "dial tcp 127.0.0.1:9: connect: connection refused"
						}
					})
				}
			}),
		},
		{
			name: "a refused destination is said to be retried", rule: "DLV-20",
			caught: []string{"A link-local destination is refused once and never retried"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/deliveries") {
					r.eachItem(func(it map[string]any) {
						if strings.HasPrefix(toString(it["error"]), "destination not allowed") {
							it["nextAttemptAt"] = plusSeconds(it["at"], 1)
						}
					})
				}
			}),
		},
		{
			name: "a running clock accepts a move", rule: "CLK-4",
			// conform sees the clock take a move without holding it, and
			// judges it as the running clock it is.
			caught: []string{"A running clock cannot be moved"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.URL.Path == "/_sandbox/clock" && r.status == http.StatusConflict {
					r.status = http.StatusOK
					r.body = []byte(`{"success":true,"data":{"now":"` + time.Now().UTC().Format("2006-01-02T15:04:05.000Z") + `"}}`)
				}
			}),
		},
		{
			name: "a move advances the clock twice as far", rule: "CLK-2", opts: frozen,
			caught: []string{"A move shifts the account's time by exactly the advance"},
			wrap: asks(func(req *http.Request) {
				if req.URL.Path == "/_sandbox/clock" && req.Method == http.MethodPost {
					rewriteBody(req, func(m map[string]any) {
						if d, err := time.ParseDuration(toString(m["advance"])); err == nil {
							m["advance"] = (2 * d).String()
						}
					})
				}
			}),
		},
		{
			name: "a move changes every account's clock", rule: "CLK-3", opts: frozen,
			caught: []string{"A move changes only the caller's clock"},
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				keys := map[string]bool{}
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					key := bearer(req)
					mu.Lock()
					keys[key] = true
					var others []string
					for k := range keys {
						if k != key {
							others = append(others, k)
						}
					}
					mu.Unlock()
					if req.URL.Path == "/_sandbox/clock" && r.status == http.StatusOK {
						var in struct{ Advance string }
						_ = json.Unmarshal(body, &in)
						for _, k := range others {
							sideRequest(next, k, http.MethodPost, "/_sandbox/clock", `{"advance":"`+in.Advance+`"}`)
						}
					}
				})
			},
		},
		{
			name: "the Date header on the real clock", rule: "CLK-6", opts: frozen,
			caught: []string{"Every account starts at the same frozen instant", "A move changes only the caller's clock"},
			wrap: answers(func(_ *http.Request, r *response) {
				r.header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
			}),
		},
		{
			name: "settling answers at once, whatever is in flight", rule: "CLK-10",
			caught: []string{"Settling waits until the account's deliveries are done"},
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/deliveries/settle" {
					rewriteRaw(req, func([]byte) []byte { return []byte(`{"timeoutMs":1}`) })
				}
			}),
		},
		{
			name: "settling says settled while a delivery is in flight", rule: "CLK-10",
			caught: []string{"Settling waits until the account's deliveries are done"},
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/deliveries/settle" {
					r.data(func(d map[string]any) { d["settled"], d["inFlight"] = true, json.Number("0") })
				}
			}),
		},
		{
			name: "a settle's timeoutMs clamped into range", rule: "CLK-10",
			caught: []string{"A settle waits at most 30000 ms, and names a timeoutMs it cannot take rather than clamp it"},
			wrap: asks(func(req *http.Request) {
				if req.Method != http.MethodPost || req.URL.Path != "/_sandbox/deliveries/settle" {
					return
				}
				rewriteBody(req, func(m map[string]any) {
					if t, ok := number(m["timeoutMs"]); ok && (t < 1 || t > 30000) {
						m["timeoutMs"] = json.Number(strconv.Itoa(int(min(max(t, 1), 30000))))
					}
				})
			}),
		},
		{
			name: "a reset keeps the events", rule: "RESET-4",
			caught: []string{"A reset starts the events and the delivery records over"},
			wrap: func(next http.Handler) http.Handler {
				var stale cachedItems
				return breaking(next, func(req *http.Request) {
					if req.URL.Path == "/_sandbox/reset" {
						stale.keep(next, bearer(req), "/_sandbox/events?limit=100")
					}
				}, func(req *http.Request, r *response) {
					if isGet(req, "/_sandbox/events") {
						stale.appendTo(bearer(req), r)
					}
				})
			},
		},
		{
			name: "a reset keeps the /v1 counts", rule: "RESET-5",
			caught: []string{"A reset starts the /v1 counts over, and the controls' budget carries on"},
			wrap: func(next http.Handler) http.Handler {
				var spent, carried perKey
				return breaking(next, nil, func(req *http.Request, r *response) {
					key := bearer(req)
					switch {
					case req.URL.Path == "/_sandbox/reset":
						carried.add(key, spent.add(key, 0))
					case strings.HasPrefix(req.URL.Path, "/v1/") && r.header.Get("X-RateLimit-Remaining") != "":
						spent.add(key, 1)
						if n := carried.add(key, 0); n > 0 {
							r.header.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(r.header, "X-RateLimit-Remaining")-n))
						}
					}
				})
			},
		},
		{
			name: "a reset keeps the planned faults", rule: "RESET-7",
			caught: []string{"A reset clears every planned fault and the journal"},
			wrap: func(next http.Handler) http.Handler {
				var planned cachedItems
				return breaking(next, func(req *http.Request) {
					if req.URL.Path == "/_sandbox/reset" {
						planned.keep(next, bearer(req), "/_sandbox/faults")
					}
				}, func(req *http.Request, r *response) {
					if req.URL.Path != "/_sandbox/reset" {
						return
					}
					key := bearer(req)
					planned.mu.Lock()
					faults := planned.items[key]
					delete(planned.items, key)
					planned.mu.Unlock()
					for _, f := range faults {
						spec := map[string]any{}
						for k, v := range f.(map[string]any) {
							if k != "id" && k != "fired" && v != nil {
								spec[k] = v
							}
						}
						b, _ := json.Marshal(spec)
						sideRequest(next, key, http.MethodPost, "/_sandbox/faults", string(b))
					}
				})
			},
		},
		{
			name: "a reset keeps the journal", rule: "RESET-8",
			caught: []string{"A reset clears every planned fault and the journal"},
			wrap: func(next http.Handler) http.Handler {
				var stale cachedItems
				return breaking(next, func(req *http.Request) {
					if req.URL.Path == "/_sandbox/reset" {
						stale.keep(next, bearer(req), "/_sandbox/requests")
					}
				}, func(req *http.Request, r *response) {
					if isGet(req, "/_sandbox/requests") {
						stale.appendTo(bearer(req), r)
					}
				})
			},
		},
		{
			name: "webhook secrets change after a reset", rule: "RESET-9",
			caught: []string{"A reset keeps webhook secrets derivable"},
			wrap: func(next http.Handler) http.Handler {
				var resets perKey
				return breaking(next, nil, func(req *http.Request, r *response) {
					key := bearer(req)
					switch {
					case req.URL.Path == "/_sandbox/reset":
						resets.add(key, 1)
					case req.URL.Path == "/v1/webhooks" && r.status == http.StatusOK && resets.add(key, 0) > 0:
						r.data(func(d map[string]any) { d["secret"] = toString(d["secret"]) + "0" })
					}
				})
			},
		},
		{
			name: "a planned fault hits every key", rule: "CTL-1",
			caught: []string{"A control acts on the caller's account only"},
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				seen := map[string]bool{}
				var plans []string
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					key := bearer(req)
					mu.Lock()
					replay := []string(nil)
					if !seen[key] {
						seen[key] = true
						replay = append(replay, plans...)
					}
					// Only status faults are lent to other keys: a network
					// fault lent to the run's own probes would stop the run
					// as could not judge, hiding what it shows.
					if req.URL.Path == "/_sandbox/faults" && req.Method == http.MethodPost && r.status == http.StatusOK && !bytes.Contains(body, []byte(`"network"`)) {
						plans = append(plans, string(body))
					}
					mu.Unlock()
					for _, p := range replay {
						sideRequest(next, key, http.MethodPost, "/_sandbox/faults", p)
					}
				})
			},
		},
		{
			name: "control requests spend the /v1 budget", rule: "CTL-3",
			// Every scenario that shows it counts across a window, which a
			// running clock may end in between and the step then skips: the
			// run names the rule by whichever of them ran.
			wrap: func(next http.Handler) http.Handler {
				var controls perKey
				return breaking(next, nil, func(req *http.Request, r *response) {
					key := bearer(req)
					switch {
					case strings.HasPrefix(req.URL.Path, "/_sandbox/"):
						controls.add(key, 1)
					case r.header.Get("X-RateLimit-Remaining") != "":
						r.header.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(r.header, "X-RateLimit-Remaining")-controls.add(key, 0)))
					}
				})
			},
		},
		{
			name: "a title of 201 characters accepted, cut to 200", rule: "CTL-7",
			caught: []string{"Filing a bug with a title of 201 chars is refused, naming title"},
			wrap: asks(func(req *http.Request) {
				if req.URL.Path == "/_sandbox/bugs" {
					rewriteBody(req, func(m map[string]any) {
						if t := toString(m["title"]); len(t) > 200 {
							m["title"] = t[:200]
						}
					})
				}
			}),
		},
		{
			name: "the journal keeps 50 requests", rule: "JRNL-2",
			caught: []string{"The journal keeps the last 100 requests"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/requests") {
					r.data(func(d map[string]any) {
						if items, _ := d["items"].([]any); len(items) > 50 {
							d["items"] = items[:50]
						}
					})
				}
			}),
		},
		{
			name: "the journal counts only the body it kept", rule: "JRNL-5",
			caught: []string{"A long body is kept in part, and its size in whole"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/requests") {
					r.eachItem(func(it map[string]any) { it["bodyBytes"] = json.Number(strconv.Itoa(len(toString(it["body"])))) })
				}
			}),
		},
		{
			name: "the journal does not say which fault answered", rule: "JRNL-10",
			caught: []string{"An entry names the fault that answered, and the time a delay took"},
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/requests") {
					r.eachItem(func(it map[string]any) { it["fault"] = nil })
				}
			}),
		},
		{
			name: "the journal shows the key in a query", rule: "JRNL-12",
			caught: []string{"Every key in an entry appears only as its hint"},
			wrap: answers(func(req *http.Request, r *response) {
				if key := bearer(req); isGet(req, "/_sandbox/requests") && len(key) > 8 {
					hint := "svc_test_…" + key[len(key)-4:]
					r.eachItem(func(it map[string]any) {
						it["query"] = strings.ReplaceAll(toString(it["query"]), hint, key)
					})
				}
			}),
		},
		{
			name: "the journal ignores its method filter", rule: "JRNL-13",
			caught: []string{"The journal filters by method and by path pattern"},
			wrap: asks(func(req *http.Request) {
				if isGet(req, "/_sandbox/requests") {
					q := req.URL.Query()
					q.Del("method")
					req.URL.RawQuery = q.Encode()
				}
			}),
		},
	}
}

// breakingWithBody is breaking for a deployment whose after hook needs the
// request body, which the sandbox behind it has read.
func breakingWithBody(next http.Handler, after func(req *http.Request, body []byte, r *response)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body := keepBody(req)
		breaking(next, nil, func(req *http.Request, r *response) { after(req, body, r) }).ServeHTTP(w, req)
	})
}

package conformance_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// plannedFaultProofs break one rule each of planned faults and the journal
// (FAULT, JRNL), beyond faultProofs. Answers of /v1 requests are rewritten
// only when a planned fault wrote them and they are whole, so that network
// faults reach the client as the sandbox makes them.
func plannedFaultProofs() []proof {
	requestPlans := func(edit func(plan map[string]any)) func(http.Handler) http.Handler {
		return plans(func(plan map[string]any) {
			if plan["event"] == nil {
				edit(plan)
			}
		})
	}
	controlAnswer := func(method, path string, edit func(d map[string]any)) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return onControls(next, nil, func(req *http.Request, r *response) {
				if req.Method == method && req.URL.Path == path {
					r.data(edit)
				}
			})
		}
	}
	faultAnswers := func(edit func(req *http.Request, r *response)) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return breaking(next, nil, func(req *http.Request, r *response) {
				if strings.HasPrefix(req.URL.Path, "/v1/") && r.header.Get("X-Sandbox-Fault") != "" {
					edit(req, r)
				}
			})
		}
	}
	return []proof{
		{
			name: "a fault planned for every request answers the journal too", rule: "FAULT-4",
			caught: []string{"A control acts on the caller's account only"},
			wrap:   faultingControls,
		},
		{
			name: "the newest planned fault that matches hits first", rule: "FAULT-9",
			caught: []string{"When several planned faults match a request, the oldest hits it and no other"},
			wrap:   newestFaultFirst,
		},
		{
			name: "a planned 500 answered with INJECTED_FAILURE", rule: "FAULT-13",
			caught: []string{"A POST answered by a planned status 500 creates nothing and emits no event"},
			wrap: faultAnswers(func(_ *http.Request, r *response) {
				r.errorObject(func(e map[string]any) {
					if e["code"] == "INTERNAL_ERROR" {
						e["code"] = "INJECTED_FAILURE"
					}
				})
			}),
		},
		{
			name: "an injected 429 or 503 without a Retry-After unless planned", rule: "FAULT-14",
			caught: []string{"retryAfter null takes the Retry-After off a 429"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(_ *http.Request, status int, h http.Header) {
					if h.Get("X-Sandbox-Fault") != "" && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && h.Get("Retry-After") == "1" {
						h.Del("Retry-After")
					}
				})
			},
		},
		{
			name: "a status fault's own headers dropped", rule: "FAULT-16",
			caught: []string{"A status fault answers its own headers and raw body, a malformed answer is no JSON, and both carry the budget as it stands"},
			wrap:   droppingFaultHeaders,
		},
		{
			name: "a status fault's raw body wrapped in the envelope", rule: "FAULT-17",
			caught: []string{"A status fault answers its own headers and raw body, a malformed answer is no JSON, and both carry the budget as it stands"},
			wrap: faultAnswers(func(_ *http.Request, r *response) {
				if r.status < 400 || json.Valid(r.body) {
					return
				}
				wrapped, _ := json.Marshal(map[string]any{"success": false, "error": map[string]any{"code": "INJECTED_FAILURE", "message": string(r.body), "status": r.status}})
				r.body = wrapped
				r.header.Set("Content-Type", "application/json")
			}),
		},
		{
			name: "a delay of a request not waited", rule: "FAULT-18",
			caught: []string{"A trickled or delayed answer comes whole, late, and counts like any other"},
			wrap: requestPlans(func(plan map[string]any) {
				if d, ok := number(plan["delayMs"]); ok && d > 1 {
					plan["delayMs"] = 1
				}
			}),
		},
		{
			name: "a malformed answer sent as text/html", rule: "FAULT-22",
			caught: []string{"A status fault answers its own headers and raw body, a malformed answer is no JSON, and both carry the budget as it stands"},
			wrap: faultAnswers(func(_ *http.Request, r *response) {
				if r.status == http.StatusOK && !json.Valid(r.body) {
					r.header.Set("Content-Type", "text/html; charset=utf-8")
				}
			}),
		},
		{
			name: "a fault's answer without rate-limit headers", rule: "FAULT-26",
			caught: []string{"A status fault answers its own headers and raw body, a malformed answer is no JSON, and both carry the budget as it stands"},
			wrap: func(next http.Handler) http.Handler {
				return editHeaders(next, func(_ *http.Request, status int, h http.Header) {
					if h.Get("X-Sandbox-Fault") != "" && status >= 400 {
						for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Scope"} {
							h.Del(name)
						}
					}
				})
			},
		},
		{
			name: "a status fault's answer spends the budget", rule: "FAULT-26",
			caught: []string{"A status fault answers its own headers and raw body, a malformed answer is no JSON, and both carry the budget as it stands"},
			wrap: func(next http.Handler) http.Handler {
				var spent perKey
				return editHeaders(next, func(req *http.Request, status int, h http.Header) {
					key := bearer(req)
					if req.URL.Path == "/_sandbox/reset" {
						spent.add(key, -spent.add(key, 0))
					}
					if !strings.HasPrefix(req.URL.Path, "/v1/") || h.Get("X-RateLimit-Remaining") == "" {
						return
					}
					if h.Get("X-Sandbox-Fault") != "" && status >= 400 {
						spent.add(key, 1)
					}
					if n := spent.add(key, 0); n > 0 {
						h.Set("X-RateLimit-Remaining", strconv.Itoa(max(intHeader(h, "X-RateLimit-Remaining")-n, 0)))
					}
				})
			},
		},
		{
			name: "the fault list's fired stays at 0", rule: "FAULT-30",
			caught: []string{"A fault hits as many matching requests as its count, counting down, then is gone"},
			wrap: func(next http.Handler) http.Handler {
				return onControls(next, nil, func(req *http.Request, r *response) {
					if isGet(req, "/_sandbox/faults") {
						r.eachItem(func(it map[string]any) { it["fired"] = json.Number("0") })
					}
				})
			},
		},
		{
			name: "clearing the faults says it cleared none", rule: "FAULT-32",
			caught: []string{"An account holds at most 32 planned faults"},
			wrap:   controlAnswer(http.MethodDelete, "/_sandbox/faults", func(d map[string]any) { d["cleared"] = json.Number("0") }),
		},
		{
			name: "a status fault of phase after answers before the API", rule: "FAULT-41",
			caught: []string{"A POST whose answer a planned status 503 of phase after replaces has created its record and spent its request"},
			wrap: requestPlans(func(plan map[string]any) {
				if plan["status"] != nil {
					delete(plan, "phase")
				}
			}),
		},
		{
			name: "a delay of phase after waits before the API", rule: "FAULT-41",
			caught: []string{"A POST its client gave up on during a delay of phase after was carried out before the wait"},
			wrap: requestPlans(func(plan map[string]any) {
				if plan["phase"] == "after" && plan["status"] == nil && plan["network"] == nil {
					delete(plan, "phase")
				}
			}),
		},
		{
			name: "a phase other than before or after taken as before", rule: "FAULT-41",
			caught: []string{"A fault plan with a phase of \"later\" is refused, and the plan stays as it was"},
			wrap: requestPlans(func(plan map[string]any) {
				if p, ok := plan["phase"]; ok && p != "before" && p != "after" {
					delete(plan, "phase")
				}
			}),
		},
		{
			name: "a phase on a webhook fault accepted", rule: "FAULT-40",
			caught: []string{"A fault plan with a phase on a webhook fault is refused, and the plan stays as it was"},
			wrap: plans(func(plan map[string]any) {
				if plan["event"] != nil {
					delete(plan, "phase")
				}
			}),
		},
		{
			name: "a status fault's X-Accel-Redirect header accepted", rule: "FAULT-16",
			caught: []string{"A fault plan with an X-Accel-Redirect header is refused, and the plan stays as it was"},
			wrap: faultHeaders(func(name string, _ map[string]any) bool {
				return strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Accel-")
			}),
		},
		{
			name: "a status fault's header named in over 128 bytes accepted", rule: "FAULT-16",
			caught: []string{"A fault plan with a header name of 129 bytes is refused, and the plan stays as it was"},
			wrap:   faultHeaders(func(name string, _ map[string]any) bool { return len(name) > 128 }),
		},
		{
			name: "a status fault's two headers alike but for case accepted", rule: "FAULT-16",
			caught: []string{"A fault plan with one header named in two cases is refused, and the plan stays as it was"},
			wrap: faultHeaders(func(name string, headers map[string]any) bool {
				for other := range headers {
					if other != name && strings.EqualFold(other, name) && other < name {
						return true
					}
				}
				return false
			}),
		},
		{
			name: "faults past 64 KiB in all accepted", rule: "FAULT-2",
			caught: []string{"An account's planned faults hold at most 64 KiB in all, a fault counting its body, its path and 512 bytes of its own"},
			wrap: func(next http.Handler) http.Handler {
				return onControls(next, nil, func(req *http.Request, r *response) {
					if req.Method != http.MethodPost || req.URL.Path != "/_sandbox/faults" || r.status != http.StatusConflict || !strings.Contains(string(r.body), "bytes") {
						return
					}
					r.status = http.StatusOK
					r.body = []byte(`{"success":true,"data":{"id":"flt_999999","status":500,"count":1,"fired":0}}`)
				})
			},
		},
		{
			name: "an entry a status fault of phase before answered says it was carried out", rule: "JRNL-19",
			caught: []string{"A POST answered by a planned status 500 creates nothing and emits no event"},
			wrap: journalItems(func(it map[string]any) {
				if f, ok := it["fault"].(map[string]any); ok && f["status"] != nil && f["phase"] != "after" {
					it["carriedOut"] = true
				}
			}),
		},
		{
			name: "an entry a truncate cut says the client received all", rule: "JRNL-20",
			caught: []string{"A truncated POST has created its record and spent its request"},
			wrap: journalItems(func(it map[string]any) {
				if f, ok := it["fault"].(map[string]any); ok && f["network"] == "truncate" {
					it["received"] = "all"
				}
			}),
		},
		{
			name: "a request past the parked bound waits out its delay all the same", rule: "SHR-7",
			caught: []string{"Past the 8 requests a key may hold waiting in delays, a delay is carried out without its wait"},
			wrap:   waitingPastTheBound,
		},
		{
			name: "a POST its client gave up on during a delay is carried out all the same", rule: "FAULT-42",
			caught: []string{"A POST its client gave up on during a delay before the API was not carried out and spent nothing"},
			wrap:   carryingOutAbandoned,
		},
		{
			name: "a malformed answer of phase after does not carry the request out", rule: "FAULT-43",
			caught: []string{"A POST whose answer a planned malformed answer of phase after replaces has created its record and spent its request"},
			wrap: requestPlans(func(plan map[string]any) {
				if plan["network"] == "malformed" {
					delete(plan, "phase")
				}
			}),
		},
		{
			name: "a webhook fault hits every event type", rule: "FAULT-33",
			caught: []string{"A webhook fault touches the first attempt of its event type's next deliveries only, and each record shows it as it was when it hit"},
			wrap: plans(func(plan map[string]any) {
				if e, ok := plan["event"].(string); ok && e != "*" {
					plan["event"] = "*"
				}
			}),
		},
		{
			name: "a webhook fault's retry recorded as touched by it", rule: "FAULT-33",
			caught: []string{"A webhook fault touches the first attempt of its event type's next deliveries only, and each record shows it as it was when it hit"},
			wrap: func(next http.Handler) http.Handler {
				return onControls(next, nil, func(req *http.Request, r *response) {
					if !isGet(req, "/_sandbox/deliveries") {
						return
					}
					first := map[string]any{}
					r.eachItem(func(it map[string]any) {
						if it["fault"] != nil {
							first[toString(it["eventId"])+" "+toString(it["webhookId"])] = it["fault"]
						}
					})
					r.eachItem(func(it map[string]any) {
						if f, ok := first[toString(it["eventId"])+" "+toString(it["webhookId"])]; ok && it["fault"] == nil {
							it["fault"] = f
						}
					})
				})
			},
		},
		{
			name: "settling does not count a held delivery", rule: "FAULT-35",
			caught: []string{"While a reorder webhook fault holds a delivery, settling counts it as held and does not wait for it"},
			wrap:   controlAnswer(http.MethodPost, "/_sandbox/deliveries/settle", func(d map[string]any) { d["held"] = json.Number("0") }),
		},
		{
			name: "settling counts a held delivery as in flight", rule: "FAULT-35",
			caught: []string{"While a reorder webhook fault holds a delivery, settling counts it as held and does not wait for it"},
			wrap: controlAnswer(http.MethodPost, "/_sandbox/deliveries/settle", func(d map[string]any) {
				if n, _ := strconv.Atoi(string(asNumber(d["held"]))); n > 0 {
					d["held"], d["inFlight"], d["settled"] = json.Number("0"), json.Number(strconv.Itoa(n)), false
				}
			}),
		},
		{
			name: "a webhook delay never applied", rule: "FAULT-36",
			caught: []string{"A delayed webhook fault holds the delivery, counted as scheduled, until its time comes"},
			wrap:   skippingWebhookDelay,
		},
		{
			name: "delivery records show the fault as it is now", rule: "FAULT-39",
			caught: []string{"A webhook fault touches the first attempt of its event type's next deliveries only, and each record shows it as it was when it hit"},
			wrap: func(next http.Handler) http.Handler {
				return onControls(next, nil, func(req *http.Request, r *response) {
					if !isGet(req, "/_sandbox/deliveries") {
						return
					}
					now := map[string]map[string]any{}
					r.eachItem(func(it map[string]any) {
						f, ok := it["fault"].(map[string]any)
						if !ok {
							return
						}
						id := toString(f["id"])
						fired, _ := strconv.Atoi(string(asNumber(f["fired"])))
						if seen, ok := now[id]; ok {
							if was, _ := strconv.Atoi(string(asNumber(seen["fired"]))); was >= fired {
								return
							}
						}
						now[id] = f
					})
					r.eachItem(func(it map[string]any) {
						if f, ok := it["fault"].(map[string]any); ok {
							it["fault"] = now[toString(f["id"])]
						}
					})
				})
			},
		},
		{
			name: "the journal drops the query", rule: "JRNL-3",
			caught: []string{"An entry holds the request as sent and its answer"},
			wrap:   journalItems(func(it map[string]any) { it["query"] = "" }),
		},
		{
			name: "the journal never says it cut a header", rule: "JRNL-4",
			caught: []string{"A long header value is cut, and said to be"},
			wrap:   journalItems(func(it map[string]any) { it["headersTruncated"] = false }),
		},
		{
			name: "the journal never says it cut a path or query", rule: "JRNL-6",
			caught: []string{"A long path or query is cut, and said to be"},
			wrap:   journalItems(func(it map[string]any) { it["truncated"] = false }),
		},
		{
			name: "a request a fault of phase after dropped has no status", rule: "JRNL-7",
			caught: []string{"A POST whose answer a fault of phase after drops has created its record, and the journal says its client received nothing"},
			wrap: journalItems(func(it map[string]any) {
				if it["received"] == "nothing" {
					it["status"] = nil
				}
			}),
		},
		{
			name: "the journal says every request took no time", rule: "JRNL-11",
			caught: []string{"An entry names the fault that answered, and the time a delay took"},
			wrap:   journalItems(func(it map[string]any) { it["durationMs"] = json.Number("0") }),
		},
		{
			name: "a journal filter it cannot use is ignored", rule: "JRNL-14",
			caught: []string{"A journal filter it cannot use is refused: method=FETCH"},
			wrap: func(next http.Handler) http.Handler {
				return onControls(next, func(req *http.Request) {
					if !isGet(req, "/_sandbox/requests") {
						return
					}
					q := req.URL.Query()
					if m := q.Get("method"); m != "" && !slices.Contains([]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}, m) {
						q.Del("method")
					}
					req.URL.RawQuery = q.Encode()
				}, nil)
			},
		},
		{
			name: "the journal says every request was carried out", rule: "JRNL-19",
			caught: []string{"A POST its client gave up on during a delay before the API was not carried out and spent nothing"},
			wrap:   journalItems(func(it map[string]any) { it["carriedOut"] = true }),
		},
		{
			name: "the journal says the client received the whole answer", rule: "JRNL-20",
			caught: []string{"A POST whose answer a fault of phase after drops has created its record, and the journal says its client received nothing"},
			wrap:   journalItems(func(it map[string]any) { it["received"] = "all" }),
		},
	}
}

// waitingPastTheBound is a deployment with no bound on the requests a key
// holds parked: an answer to a request a delay fault hit comes no sooner
// than the delay after the request came, whether the sandbox waited it out
// or not.
func waitingPastTheBound(next http.Handler) http.Handler {
	var mu sync.Mutex
	// delays are the planned delays by key and fault ID, which every
	// fresh account numbers from 1.
	delays := map[string]time.Duration{}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		came := time.Now()
		breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
			if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/faults" && r.status == http.StatusOK {
				var plan struct {
					DelayMs int64 `json:"delayMs"`
				}
				var answer struct {
					Data struct {
						ID string `json:"id"`
					} `json:"data"`
				}
				if json.Unmarshal(body, &plan) == nil && json.Unmarshal(r.body, &answer) == nil && plan.DelayMs > 0 {
					mu.Lock()
					delays[bearer(req)+" "+answer.Data.ID] = time.Duration(plan.DelayMs) * time.Millisecond
					mu.Unlock()
				}
				return
			}
			id := r.header.Get("X-Sandbox-Fault")
			if id == "" || !strings.HasPrefix(req.URL.Path, "/v1/") {
				return
			}
			mu.Lock()
			delay, ok := delays[bearer(req)+" "+id]
			mu.Unlock()
			if !ok {
				return
			}
			wait := time.NewTimer(time.Until(came.Add(delay)))
			defer wait.Stop()
			select {
			case <-wait.C:
			case <-req.Context().Done():
			}
		}).ServeHTTP(w, req)
	})
}

// faultHeaders drops from each request fault's plan the headers drop
// picks, as a deployment that let them through unchecked would plan the
// rest; a plan left with none keeps an empty headers object.
func faultHeaders(drop func(name string, headers map[string]any) bool) func(http.Handler) http.Handler {
	return plans(func(plan map[string]any) {
		headers, ok := plan["headers"].(map[string]any)
		if !ok || plan["event"] != nil {
			return
		}
		kept := map[string]any{}
		for name, value := range headers {
			if !drop(name, headers) {
				kept[name] = value
			}
		}
		if len(kept) != len(headers) {
			plan["headers"] = kept
		}
	})
}

// faultingControls is a deployment whose faults planned for every request
// answer the journal too, while one is planned.
func faultingControls(next http.Handler) http.Handler {
	var mu sync.Mutex
	status := map[string]int{}
	return onControls(next, func(req *http.Request) {
		key := bearer(req)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case req.URL.Path == "/_sandbox/reset", req.URL.Path == "/_sandbox/faults" && req.Method == http.MethodDelete:
			delete(status, key)
		case req.URL.Path == "/_sandbox/faults" && req.Method == http.MethodPost:
			rewriteBody(req, func(plan map[string]any) {
				if s, ok := number(plan["status"]); ok && plan["path"] == nil && plan["method"] == nil {
					status[key] = int(s)
				}
			})
		}
	}, func(req *http.Request, r *response) {
		mu.Lock()
		s := status[bearer(req)]
		mu.Unlock()
		if s != 0 && isGet(req, "/_sandbox/requests") {
			r.status = s
			r.body = []byte(`{"success":false,"error":{"code":"INJECTED_FAILURE","message":"failure injected","status":` + strconv.Itoa(s) + `}}`)
		}
	})
}

// plannedStatus is a status fault as a broken deployment keeps its own
// copy of the plan.
type plannedStatus struct {
	id, method, path string
	status, left     int
}

func (f plannedStatus) matches(req *http.Request) bool {
	if f.method != "" && f.method != req.Method {
		return false
	}
	if prefix, ok := strings.CutSuffix(f.path, "*"); ok {
		return strings.HasPrefix(req.URL.Path, prefix)
	}
	return f.path == "" || f.path == req.URL.Path
}

// newestFaultFirst is a deployment that, of two planned status faults that
// match a request, answers with the newer: the answer the sandbox makes
// from the older is given the newer's status and id.
func newestFaultFirst(next http.Handler) http.Handler {
	var mu sync.Mutex
	plans := map[string][]plannedStatus{}
	return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
		key := bearer(req)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case req.URL.Path == "/_sandbox/reset", req.URL.Path == "/_sandbox/faults" && req.Method == http.MethodDelete:
			delete(plans, key)
		case req.URL.Path == "/_sandbox/faults" && req.Method == http.MethodPost && r.status == http.StatusOK:
			var plan struct {
				Method, Path string
				Status       int
				Count        *int
				Rate, Event  any
				Network      string
				Phase        string
				DelayMs      int
			}
			if json.Unmarshal(body, &plan) != nil || plan.Status == 0 || plan.Rate != nil || plan.Event != nil || plan.Phase != "" || plan.DelayMs != 0 {
				return
			}
			left := 1
			if plan.Count != nil {
				left = *plan.Count
			}
			var answer struct{ Data struct{ ID string } }
			_ = json.Unmarshal(r.body, &answer)
			plans[key] = append(plans[key], plannedStatus{id: answer.Data.ID, method: plan.Method, path: plan.Path, status: plan.Status, left: left})
		case strings.HasPrefix(req.URL.Path, "/v1/") && r.header.Get("X-Sandbox-Fault") != "":
			hit := r.header.Get("X-Sandbox-Fault")
			var matching []plannedStatus
			for i := range plans[key] {
				if plans[key][i].matches(req) {
					matching = append(matching, plans[key][i])
				}
			}
			for i := range plans[key] {
				if plans[key][i].id == hit {
					plans[key][i].left--
				}
			}
			plans[key] = slices.DeleteFunc(plans[key], func(f plannedStatus) bool { return f.left <= 0 })
			if len(matching) < 2 || matching[0].id != hit {
				return
			}
			newest := matching[len(matching)-1]
			r.status = newest.status
			r.header.Set("X-Sandbox-Fault", newest.id)
			r.errorObject(func(e map[string]any) { e["status"] = json.Number(strconv.Itoa(newest.status)) })
		}
	})
}

// droppingFaultHeaders is a deployment whose status faults answer without
// the headers planned with them.
func droppingFaultHeaders(next http.Handler) http.Handler {
	var mu sync.Mutex
	planned := map[string]bool{}
	return onControls(editHeaders(next, func(_ *http.Request, _ int, h http.Header) {
		if h.Get("X-Sandbox-Fault") == "" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for name := range planned {
			h.Del(name)
		}
	}), func(req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/_sandbox/faults" {
			return
		}
		rewriteBody(req, func(plan map[string]any) {
			headers, _ := plan["headers"].(map[string]any)
			mu.Lock()
			defer mu.Unlock()
			for name := range headers {
				if !strings.EqualFold(name, "Retry-After") {
					planned[http.CanonicalHeaderKey(name)] = true
				}
			}
		})
	}, nil)
}

// carryingOutAbandoned is a deployment that carries out a POST whose
// client gave up while a planned delay held it.
func carryingOutAbandoned(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || !strings.HasPrefix(req.URL.Path, "/v1/") {
			next.ServeHTTP(w, req)
			return
		}
		body := keepBody(req)
		e := &headerEditor{ResponseWriter: w, req: req, edit: func(*http.Request, int, http.Header) {}, header: http.Header{}}
		next.ServeHTTP(e, req)
		if !e.wrote && !e.hijacked && req.Context().Err() != nil {
			sideRequest(next, bearer(req), req.Method, req.URL.Path, string(body))
		}
	})
}

// skippingWebhookDelay is a deployment that takes a webhook fault's
// delayMs, and shows it planned, but delivers at once.
func skippingWebhookDelay(next http.Handler) http.Handler {
	var mu sync.Mutex
	delays := map[string]any{}
	return onControls(next, func(req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/_sandbox/faults" {
			return
		}
		rewriteBody(req, func(plan map[string]any) {
			if d, ok := number(plan["delayMs"]); ok && d > 1 && plan["event"] != nil {
				mu.Lock()
				delays[bearer(req)] = plan["delayMs"]
				mu.Unlock()
				plan["delayMs"] = 1
			}
		})
	}, func(req *http.Request, r *response) {
		if req.Method != http.MethodPost || req.URL.Path != "/_sandbox/faults" {
			return
		}
		mu.Lock()
		d, ok := delays[bearer(req)]
		delete(delays, bearer(req))
		mu.Unlock()
		if ok {
			r.data(func(f map[string]any) { f["delayMs"] = d })
		}
	})
}

package conformance_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// faultProofs break one documented rule each of planned faults and of
// the journal's record of them (docs/contract.md: FAULT, JRNL). Answers of
// /v1 requests pass through untouched but for their headers, so that the
// network faults still reach the client as the sandbox makes them.
func faultProofs() []proof {
	journalQuery := func(edit func(q map[string][]string)) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return onControls(next, func(req *http.Request) {
				if isGet(req, "/_sandbox/requests") {
					q := req.URL.Query()
					edit(q)
					req.URL.RawQuery = q.Encode()
				}
			}, nil)
		}
	}
	faulted := func(edit func(status int, h http.Header)) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return editHeaders(next, func(_ *http.Request, status int, h http.Header) {
				if h.Get("X-Sandbox-Fault") != "" {
					edit(status, h)
				}
			})
		}
	}
	network := func(from, to string) func(plan map[string]any) {
		return func(plan map[string]any) {
			if plan["network"] == from {
				plan["network"] = to
			}
		}
	}
	return []proof{
		{
			name: "a new fault is planned before those already planned", rule: "FAULT-1",
			caught: []string{"A planned fault is answered with its id, its count and nothing fired, after those already planned"},
			wrap: func(next http.Handler) http.Handler {
				return onControls(next, nil, func(req *http.Request, r *response) {
					if isGet(req, "/_sandbox/faults") {
						r.data(func(d map[string]any) {
							items, _ := d["items"].([]any)
							slices.Reverse(items)
						})
					}
				})
			},
		},
		{
			name: "an account holds at most 16 faults", rule: "FAULT-2",
			caught: []string{"An account holds at most 32 planned faults"},
			wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/faults" {
						var planned struct {
							Data struct{ Items []any } `json:"data"`
						}
						_ = json.Unmarshal(sideRequest(next, bearer(req), http.MethodGet, "/_sandbox/faults", "").Body.Bytes(), &planned)
						if len(planned.Data.Items) >= 16 {
							w.Header().Set("Content-Type", "application/json")
							w.WriteHeader(http.StatusConflict)
							_, _ = io.WriteString(w, `{"success":false,"error":{"code":"LIMIT_REACHED","message":"16 faults planned","status":409}}`)
							return
						}
					}
					next.ServeHTTP(w, req)
				})
			},
		},
		{
			name: "a misspelt field is dropped, not refused", rule: "FAULT-3",
			caught: []string{"A fault plan with a misspelt count is refused, and the plan stays as it was"},
			wrap: plans(func(plan map[string]any) {
				for k := range plan {
					if !slices.Contains([]string{"method", "path", "count", "rate", "seed", "status", "retryAfter", "headers", "body", "delayMs", "network", "trickleMs"}, k) {
						delete(plan, k)
					}
				}
			}),
		},
		{
			name: "a fault without a method hits only GETs", rule: "FAULT-5",
			caught: []string{"A fault without a method or a path hits every /v1 request"},
			wrap: plans(func(plan map[string]any) {
				if plan["method"] == nil && plan["path"] == nil {
					plan["method"] = "GET"
				}
			}),
		},
		{
			name: "a fault ignores its method", rule: "FAULT-6",
			caught: []string{"A fault with a method hits only requests with that method"},
			wrap:   plans(func(plan map[string]any) { delete(plan, "method") }),
		},
		{
			name: "a path also hits the paths under it", rule: "FAULT-7",
			caught: []string{"A fault with a path hits that path only, whatever the query"},
			wrap: plans(func(plan map[string]any) {
				if p := toString(plan["path"]); p != "" && !strings.HasSuffix(p, "*") {
					plan["path"] = p + "*"
				}
			}),
		},
		{
			name: "a final * is taken as part of the path", rule: "FAULT-7",
			caught: []string{"A path ending in * hits every path that starts with what comes before it"},
			wrap: plans(func(plan map[string]any) {
				if p := toString(plan["path"]); strings.HasSuffix(p, "*") {
					plan["path"] = strings.TrimSuffix(p, "*")
				}
			}),
		},
		{
			name: "a path outside /v1 is taken as under /v1", rule: "FAULT-8",
			caught: []string{"A fault plan with a path outside /v1 is refused, and the plan stays as it was"},
			wrap: plans(func(plan map[string]any) {
				if p := toString(plan["path"]); p != "" && !strings.HasPrefix(p, "/v1") {
					plan["path"] = "/v1" + p
				}
			}),
		},
		{
			name: "a fault hits one request more than its count", rule: "FAULT-10",
			caught: []string{"A fault hits as many matching requests as its count, counting down, then is gone"},
			wrap: func(next http.Handler) http.Handler {
				// The listing hides the extra hit: only the requests show it.
				return onControls(next, func(req *http.Request) {
					if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/faults" {
						rewriteBody(req, func(plan map[string]any) {
							if n, ok := number(plan["count"]); ok {
								plan["count"] = n + 1
							} else if plan["rate"] == nil {
								plan["count"] = 2
							}
						})
					}
				}, func(req *http.Request, r *response) {
					lessOne := func(f map[string]any) {
						if n, err := strconv.Atoi(string(asNumber(f["count"]))); err == nil {
							f["count"] = json.Number(strconv.Itoa(n - 1))
						}
					}
					switch {
					case req.URL.Path == "/_sandbox/faults" && req.Method == http.MethodPost:
						r.data(lessOne)
					case isGet(req, "/_sandbox/faults"):
						r.eachItem(lessOne)
					}
				})
			},
		},
		{
			name: "each account's draws start from a seed of its own", rule: "FAULT-11",
			caught: []string{"The same seed hits the same requests of the same sequence, and a rate alone stays planned"},
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				planners := map[float64][]string{}
				return onControlsWithKey(next, func(key string, req *http.Request) {
					if req.Method != http.MethodPost || req.URL.Path != "/_sandbox/faults" {
						return
					}
					rewriteBody(req, func(plan map[string]any) {
						seed, ok := number(plan["seed"])
						if !ok {
							return
						}
						mu.Lock()
						defer mu.Unlock()
						i := slices.Index(planners[seed], key)
						if i < 0 {
							i = len(planners[seed])
							planners[seed] = append(planners[seed], key)
						}
						plan["seed"] = seed + float64(1000*i)
					})
				})
			},
		},
		{
			name: "a rate alone hits once and is gone", rule: "FAULT-12",
			caught: []string{"The same seed hits the same requests of the same sequence, and a rate alone stays planned"},
			wrap: plans(func(plan map[string]any) {
				if plan["rate"] != nil && plan["count"] == nil {
					plan["count"] = 1
				}
			}),
		},
		{
			name: "Retry-After 0 is sent as 1", rule: "FAULT-15",
			caught: []string{"retryAfter 0 is the Retry-After of a 503"},
			wrap: faulted(func(_ int, h http.Header) {
				if h.Get("Retry-After") == "0" {
					h.Set("Retry-After", "1")
				}
			}),
		},
		{
			name: "a reset fault closes the connection instead", rule: "FAULT-19",
			caught: []string{"A POST whose connection is reset creates nothing, and the journal keeps it with no status"},
			wrap:   plans(network("reset", "close")),
		},
		{
			name: "a close fault resets the connection instead", rule: "FAULT-20",
			caught: []string{"A POST whose connection is closed creates nothing, and the journal keeps it with no status"},
			wrap:   plans(network("close", "reset")),
		},
		{
			name: "a truncate fault sends the answer whole", rule: "FAULT-21",
			caught: []string{"A truncated POST has created its record and spent its request"},
			wrap: plans(func(plan map[string]any) {
				if plan["network"] == "truncate" {
					delete(plan, "network")
					plan["delayMs"] = 1
				}
			}),
		},
		{
			name: "a trickle sends half the answer", rule: "FAULT-23",
			// A trickle sent at once shows only in how long it took, which
			// a loaded machine stretches too; a part of the answer shows
			// whatever the load.
			caught: []string{"A trickled or delayed answer comes whole, late, and counts like any other"},
			wrap: plans(func(plan map[string]any) {
				if plan["network"] == "trickle" {
					plan["network"] = "truncate"
					delete(plan, "trickleMs")
				}
			}),
		},
		{
			name: "a network failure with a status is planned without the status", rule: "FAULT-24",
			caught: []string{"A fault plan with a network failure and a status is refused, and the plan stays as it was"},
			wrap: plans(func(plan map[string]any) {
				if plan["network"] != nil {
					delete(plan, "status")
				}
			}),
		},
		{
			name: "X-Sandbox-Fault stripped", rule: "FAULT-25",
			caught: []string{"A fault with a method hits only requests with that method", "A path ending in * hits every path that starts with what comes before it"},
			wrap:   faulted(func(_ int, h http.Header) { h.Del("X-Sandbox-Fault") }),
		},
		{
			name: "a delayed or trickled request spends no budget", rule: "FAULT-27",
			caught: []string{"A trickled or delayed answer comes whole, late, and counts like any other"},
			wrap: faulted(func(status int, h http.Header) {
				if status < 300 && h.Get("X-RateLimit-Remaining") != "" {
					h.Set("X-RateLimit-Remaining", strconv.Itoa(intHeader(h, "X-RateLimit-Remaining")+1))
				}
			}),
		},
		{
			name: "a POST answered by a status fault is carried out too", rule: "FAULT-28",
			caught: []string{"A POST answered by a planned status 500 creates nothing and emits no event"},
			wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					if req.Method != http.MethodPost || !strings.HasPrefix(req.URL.Path, "/v1/") {
						next.ServeHTTP(w, req)
						return
					}
					body := keepBody(req)
					failed := false
					editHeaders(next, func(_ *http.Request, status int, h http.Header) {
						failed = status >= 400 && h.Get("X-Sandbox-Fault") != ""
					}).ServeHTTP(w, req)
					if failed {
						sideRequest(next, bearer(req), http.MethodPost, req.URL.Path, string(body))
					}
				})
			},
		},
		{
			name: "a truncated POST creates nothing", rule: "FAULT-29",
			caught: []string{"A truncated POST has created its record and spent its request"},
			wrap:   hidingCut,
		},
		{
			name: "a spent fault stays listed", rule: "FAULT-31",
			caught: []string{"A fault hits as many matching requests as its count, counting down, then is gone"},
			wrap:   keepingSpent,
		},
		{
			name: "the journal drops PATCH requests", rule: "JRNL-1",
			caught: []string{"An entry keeps the body of a request a status fault answered"},
			wrap: journal(func(r *response) {
				r.keepItems(func(it map[string]any) bool { return it["method"] != "PATCH" })
			}),
		},
		{
			name: "a dropped request is journalled with a 502", rule: "JRNL-9",
			caught: []string{"A dropped request is complete in the journal when its client sees the drop, listed before the retry"},
			wrap: journalItems(func(it map[string]any) {
				if f, ok := it["fault"].(map[string]any); ok && (f["network"] == "reset" || f["network"] == "close") {
					it["status"] = json.Number("502")
				}
			}),
		},
		{
			name: "a request its client gave up on is not marked abandoned", rule: "JRNL-8",
			caught: []string{"A request its client gave up on is complete in the journal, abandoned and with no status"},
			wrap:   journalItems(func(it map[string]any) { it["abandoned"] = false }),
		},
		{
			name: "a dropped request is listed after the retry that followed it", rule: "JRNL-15",
			caught: []string{"A dropped request is complete in the journal when its client sees the drop, listed before the retry"},
			wrap: journal(func(r *response) {
				r.data(func(d map[string]any) {
					items, _ := d["items"].([]any)
					for i := 1; i < len(items); i++ {
						if it, _ := items[i].(map[string]any); it["status"] == nil && it["fault"] != nil {
							items[i-1], items[i] = items[i], items[i-1]
						}
					}
				})
			}),
		},
		{
			name: "the journal keeps no body of a faulted request", rule: "JRNL-16",
			caught: []string{"An entry keeps the body of a request a status fault answered"},
			wrap: journalItems(func(it map[string]any) {
				if it["fault"] != nil {
					it["body"], it["bodyBytes"] = "", json.Number("0")
				}
			}),
		},
		{
			name: "the journal ignores limit", rule: "JRNL-17",
			caught: []string{"The journal is paged like a list"},
			wrap:   journalQuery(func(q map[string][]string) { delete(q, "limit") }),
		},
		{
			name: "the journal's cursor starts over", rule: "JRNL-17",
			caught: []string{"The journal is paged like a list"},
			wrap:   journalQuery(func(q map[string][]string) { delete(q, "cursor") }),
		},
		{
			name: "the journal's count ignores the filters", rule: "JRNL-18",
			caught: []string{"The journal counts the requests matching its filters"},
			wrap: journalQuery(func(q map[string][]string) {
				if slices.Contains(q["count"], "true") {
					delete(q, "method")
					delete(q, "path")
				}
			}),
		},
	}
}

func asNumber(v any) json.Number {
	n, _ := v.(json.Number)
	return n
}

// number reads a number of a body decoded with its numbers kept exact, as
// rewriteBody and envelope decode them.
func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// onControls is breaking for the control requests only; /v1 requests reach
// the sandbox as they came, with its connection, so that a planned network
// fault is carried out as it would be without the proxy.
func onControls(next http.Handler, before func(*http.Request), after func(*http.Request, *response)) http.Handler {
	broken := breaking(next, before, after)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, "/_sandbox/") {
			broken.ServeHTTP(w, req)
			return
		}
		next.ServeHTTP(w, req)
	})
}

// plans lets edit change each fault plan on its way to the sandbox.
func plans(edit func(plan map[string]any)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return onControls(next, func(req *http.Request) {
			if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/faults" {
				rewriteBody(req, edit)
			}
		}, nil)
	}
}

// journal lets edit change the journal's answers.
func journal(edit func(r *response)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return onControls(next, nil, func(req *http.Request, r *response) {
			if isGet(req, "/_sandbox/requests") {
				edit(r)
			}
		})
	}
}

// journalItems lets edit change each entry the journal lists.
func journalItems(edit func(it map[string]any)) func(http.Handler) http.Handler {
	return journal(func(r *response) { r.eachItem(edit) })
}

// onControlsWithKey is onControls for a change to a control request that
// depends on the key that sent it.
func onControlsWithKey(next http.Handler, before func(key string, req *http.Request)) http.Handler {
	return onControls(next, func(req *http.Request) { before(bearer(req), req) }, nil)
}

// editHeaders lets edit change an answer's headers as its status is
// written; the connection stays the sandbox's to hijack or flush. The
// sandbox writes into headers of its own, so that the OpenAPI check behind
// the proxy judges what the sandbox sent.
func editHeaders(next http.Handler, edit func(req *http.Request, status int, h http.Header)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		next.ServeHTTP(&headerEditor{ResponseWriter: w, req: req, edit: edit, header: http.Header{}}, req)
	})
}

type headerEditor struct {
	http.ResponseWriter
	req      *http.Request
	edit     func(req *http.Request, status int, h http.Header)
	header   http.Header
	wrote    bool
	hijacked bool
}

func (e *headerEditor) Header() http.Header { return e.header }

func (e *headerEditor) WriteHeader(status int) {
	if !e.wrote {
		e.wrote = true
		sent := e.header.Clone()
		e.edit(e.req, status, sent)
		for k, v := range sent {
			e.ResponseWriter.Header()[k] = v
		}
	}
	e.ResponseWriter.WriteHeader(status)
}

func (e *headerEditor) Write(p []byte) (int, error) {
	if !e.wrote {
		e.WriteHeader(http.StatusOK)
	}
	return e.ResponseWriter.Write(p)
}

func (e *headerEditor) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	e.hijacked = true
	return http.NewResponseController(e.ResponseWriter).Hijack()
}

func (e *headerEditor) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// hidingCut is a deployment whose truncated POSTs create nothing: the
// campaign a cut POST names is left out of the campaigns and the events.
func hidingCut(next http.Handler) http.Handler {
	var mu sync.Mutex
	hidden := map[string][]string{}
	hides := func(key string, name any) bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(hidden[key], toString(name))
	}
	listed := breaking(next, nil, func(req *http.Request, r *response) {
		key := bearer(req)
		switch req.URL.Path {
		case "/v1/campaigns":
			r.keepItems(func(it map[string]any) bool { return !hides(key, it["name"]) })
		case "/_sandbox/events":
			r.keepItems(func(it map[string]any) bool {
				d, _ := it["data"].(map[string]any)
				return it["type"] != "campaign.created" || !hides(key, d["name"])
			})
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if isGet(req, "/v1/campaigns") || isGet(req, "/_sandbox/events") {
			listed.ServeHTTP(w, req)
			return
		}
		if req.Method != http.MethodPost || req.URL.Path != "/v1/campaigns" {
			next.ServeHTTP(w, req)
			return
		}
		body := keepBody(req)
		editor := &headerEditor{ResponseWriter: w, req: req, edit: func(*http.Request, int, http.Header) {}, header: http.Header{}}
		next.ServeHTTP(editor, req)
		var sent struct{ Name string }
		if editor.hijacked && json.Unmarshal(body, &sent) == nil {
			mu.Lock()
			hidden[bearer(req)] = append(hidden[bearer(req)], sent.Name)
			mu.Unlock()
		}
	})
}

// keepingSpent is a deployment whose fault list keeps the faults that have
// hit their count, with nothing left, until they are cleared.
func keepingSpent(next http.Handler) http.Handler {
	var mu sync.Mutex
	planned := map[string][]map[string]any{}
	return onControls(next, nil, func(req *http.Request, r *response) {
		key := bearer(req)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case req.URL.Path == "/_sandbox/reset":
			delete(planned, key)
		case req.URL.Path != "/_sandbox/faults" || r.status != http.StatusOK:
		case req.Method == http.MethodDelete:
			delete(planned, key)
		case req.Method == http.MethodPost:
			r.data(func(d map[string]any) { planned[key] = append(planned[key], d) })
		case req.Method == http.MethodGet:
			r.data(func(d map[string]any) {
				items, _ := d["items"].([]any)
				var listed []string
				for _, it := range items {
					if m, ok := it.(map[string]any); ok {
						listed = append(listed, toString(m["id"]))
					}
				}
				for _, f := range planned[key] {
					if f["count"] != nil && !slices.Contains(listed, toString(f["id"])) {
						spent := map[string]any{}
						for k, v := range f {
							spent[k] = v
						}
						spent["fired"], spent["count"] = f["count"], json.Number("0")
						items = append(items, spent)
					}
				}
				d["items"] = items
			})
		}
	})
}

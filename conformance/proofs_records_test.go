package conformance_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// recordProofs break one rule each of the accounts' records (ACCT, CMP,
// LIST, BUG, TST, ANL), and the breaks the explorer once found.
func recordProofs() []proof {
	return append(recordRuleProofs(), exploredProofs()...)
}

func recordRuleProofs() []proof {
	return []proof{
		{
			name: "a key reads another key's campaign", rule: "ACCT-1",
			wrap: lendingRecords,
		},
		{
			name: "the bugs list shows the newest bug another key filed", rule: "ACCT-2",
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				var lastBug any
				lastKey := ""
				return breaking(next, nil, func(req *http.Request, r *response) {
					if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/bugs" && r.status == http.StatusOK {
						r.envelope(func(m map[string]any) {
							mu.Lock()
							lastBug, lastKey = m["data"], bearer(req)
							mu.Unlock()
						})
					}
					if isGet(req, "/v1/bugs") && r.status == http.StatusOK {
						mu.Lock()
						bug, key := lastBug, lastKey
						mu.Unlock()
						if bug != nil && key != bearer(req) {
							r.data(func(d map[string]any) {
								items, _ := d["items"].([]any)
								d["items"] = append(items, bug)
							})
						}
					}
				})
			},
		},
		{
			name: "a fresh account is seeded without its oldest campaign", rule: "ACCT-3",
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/campaigns") {
					r.keepItems(func(it map[string]any) bool { return !strings.HasSuffix(toString(it["id"]), "_000001") })
				}
			}),
		},
		{
			name: "webhook ids carry hook_, not whk_", rule: "ACCT-4",
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, func(req *http.Request) {
					req.URL.Path = strings.ReplaceAll(req.URL.Path, "hook_", "whk_")
					req.URL.RawPath = ""
					req.URL.RawQuery = strings.ReplaceAll(req.URL.RawQuery, "hook_", "whk_")
					replaceInBody(req, "hook_", "whk_")
				}, func(_ *http.Request, r *response) {
					r.body = bytes.ReplaceAll(r.body, []byte(`"whk_`), []byte(`"hook_`))
				})
			},
		},
		{
			name: "each key's campaigns are numbered from where the keys before it left off", rule: "ACCT-5",
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				keys := map[string]int{}
				return renumbered(next, func(key string, _ *http.Request, _ int) int {
					mu.Lock()
					defer mu.Unlock()
					if _, ok := keys[key]; !ok {
						keys[key] = len(keys)
					}
					return keys[key]
				})
			},
		},
		{
			name: "a refused campaign uses up an id", rule: "ACCT-6",
			wrap: func(next http.Handler) http.Handler {
				var refused perKey
				return renumbered(next, func(key string, req *http.Request, status int) int {
					if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" && status >= 400 && status < 500 && status != http.StatusTooManyRequests {
						return refused.add(key, 1)
					}
					return refused.add(key, 0)
				})
			},
		},
		{
			name: "seeded records are an hour older than their fixtures say", rule: "ACCT-7",
			wrap: answers(func(_ *http.Request, r *response) {
				r.body = seededTimestamp.ReplaceAllFunc(r.body, func(m []byte) []byte {
					sub := seededTimestamp.FindSubmatch(m)
					return []byte(string(sub[1]) + toString(plusSeconds(string(sub[2]), -3600)) + `"`)
				})
			}),
		},
		{
			name: "each account's frozen clock starts a millisecond after the one before", rule: "ACCT-8", opts: frozen,
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				keys := map[string]int{}
				return breaking(next, nil, func(req *http.Request, r *response) {
					mu.Lock()
					if _, ok := keys[bearer(req)]; !ok {
						keys[bearer(req)] = len(keys)
					}
					shift := time.Duration(keys[bearer(req)]) * time.Millisecond
					mu.Unlock()
					r.body = anyTimestamp.ReplaceAllFunc(r.body, func(m []byte) []byte {
						t, err := time.Parse(time.RFC3339Nano, string(m))
						if err != nil {
							return m
						}
						return []byte(t.Add(shift).UTC().Format("2006-01-02T15:04:05.000Z"))
					})
				})
			},
		},
		{
			name: "a refused campaign is stored all the same", rule: "ACCT-6",
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, nil, func(req *http.Request, r *response) {
					if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" && (r.status == http.StatusBadRequest || r.status == http.StatusUnprocessableEntity || r.status == http.StatusUnsupportedMediaType) {
						sideRequest(next, bearer(req), http.MethodPost, "/v1/campaigns", ghostCampaign)
					}
				})
			},
		},
		{
			name: "names are stored trimmed", rule: "CMP-1",
			wrap: asks(func(r *http.Request) {
				if r.Method == http.MethodPost && r.URL.Path == "/v1/campaigns" {
					rewriteBody(r, func(m map[string]any) {
						if s, ok := m["name"].(string); ok && strings.TrimSpace(s) != "" {
							m["name"] = strings.TrimSpace(s)
						}
					})
				}
			}),
		},
		{
			name: "a refused transition answers 400 instead of 409", rule: "BUG-18",
			wrap: answers(func(_ *http.Request, r *response) {
				if r.status == http.StatusConflict {
					r.status = http.StatusBadRequest
					r.errorObject(func(e map[string]any) { e["status"] = json.Number("400") })
				}
			}),
		},
		{
			name: "a campaign answered with a platform other than ios is refused", rule: "CMP-1",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					rewriteBody(req, func(m map[string]any) {
						if m["platform"] == "android" {
							m["platform"] = "android-tv"
						}
					})
				}
			}),
		},
		{
			name: "a creation's answer leaves out createdAt", rule: "CMP-2",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					r.data(func(d map[string]any) { delete(d, "createdAt") })
				}
			}),
		},
		{
			name: "a new campaign is answered as pending", rule: "CMP-3",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					r.data(func(d map[string]any) {
						if d["status"] == "draft" {
							d["status"] = "pending"
						}
					})
				}
			}),
		},
		{
			name: "a creation's createdAt is a date with a space and no zone", rule: "CMP-4",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					r.data(func(d map[string]any) {
						if t, err := time.Parse(time.RFC3339Nano, toString(d["createdAt"])); err == nil {
							d["createdAt"] = t.Format("2006-01-02 15:04:05")
						}
					})
				}
			}),
		},
		{
			name: "the campaigns list shows only the seeded campaigns", rule: "CMP-5",
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/campaigns") {
					r.keepItems(func(it map[string]any) bool {
						_, n, ok := idNumber(toString(it["id"]))
						return ok && n <= 4
					})
				}
			}),
		},
		{
			name: "a campaign created by the API is 404 by id", rule: "CMP-6",
			wrap: asks(func(req *http.Request) {
				if id, ok := strings.CutPrefix(req.URL.Path, "/v1/campaigns/"); ok && req.Method == http.MethodGet {
					if _, n, ok := idNumber(id); ok && n > 4 {
						req.URL.Path = "/v1/campaigns/cmp_none"
					}
				}
			}),
		},
		{
			name: "a campaign read by id has one tester fewer than written", rule: "CMP-7",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/campaigns/") {
					r.data(func(d map[string]any) {
						if n, err := asNumber(d["testersRequired"]).Int64(); err == nil && n > 1 {
							d["testersRequired"] = json.Number(strconv.FormatInt(n-1, 10))
						}
					})
				}
			}),
		},
		{
			name: "a creation's answer leaves out the platform", rule: "CMP-8",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					r.data(func(d map[string]any) { delete(d, "platform") })
				}
			}),
		},
		{
			name: "a blank name is taken", rule: "CMP-9",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					rewriteBody(req, func(m map[string]any) {
						if s, ok := m["name"].(string); ok && s != "" && strings.TrimSpace(s) == "" {
							m["name"] = s + "_"
						}
					})
				}
			}),
		},
		{
			name: "the platform is read without regard to case", rule: "CMP-10",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					rewriteBody(req, func(m map[string]any) {
						if s, ok := m["platform"].(string); ok {
							m["platform"] = strings.ToLower(s)
						}
					})
				}
			}),
		},
		{
			name: "10.0 testers are taken as 10", rule: "CMP-11",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					replaceInBodyRe(req, regexp.MustCompile(`("testersRequired"\s*:\s*[0-9]+)\.0+\b`), "$1")
				}
			}),
		},
		{
			name: "a reward of three decimals is taken, rounded down to two", rule: "CMP-12",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					replaceInBodyRe(req, regexp.MustCompile(`("rewardPerBug"\s*:\s*[0-9]+\.[0-9]{2})[0-9]+`), "$1")
				}
			}),
		},
		{
			name: "a read returns rewardPerBug in another form than written", rule: "CMP-13",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/campaigns/") {
					r.body = bytes.ReplaceAll(r.body, []byte(`.50,`), []byte(`.5,`))
					r.body = bytes.ReplaceAll(r.body, []byte(`.99,`), []byte(`.990,`))
				}
			}),
		},
		{
			name: "an unknown field of a creation is echoed", rule: "CMP-14",
			wrap: func(next http.Handler) http.Handler {
				return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
					if req.Method != http.MethodPost || req.URL.Path != "/v1/campaigns" {
						return
					}
					var sent map[string]any
					if json.Unmarshal(body, &sent) != nil {
						return
					}
					r.data(func(d map[string]any) {
						for k, v := range sent {
							if _, ok := d[k]; !ok {
								d[k] = v
							}
						}
					})
				})
			},
		},
		{
			name: "the campaigns' status filter is ignored", rule: "CMP-15",
			wrap: asks(func(req *http.Request) {
				if isGet(req, "/v1/campaigns") {
					q := req.URL.Query()
					q.Del("status")
					req.URL.RawQuery = q.Encode()
				}
			}),
		},
		{
			name: "a creation answers testersRequired as a string", rule: "CMP-17",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
					r.data(func(d map[string]any) {
						if n, ok := d["testersRequired"].(json.Number); ok {
							d["testersRequired"] = string(n)
						}
					})
				}
			}),
		},
		{
			name: "the testers list leaves out nextCursor on its last page", rule: "LIST-1",
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/testers") || isGet(req, "/_sandbox/events") {
					r.data(func(d map[string]any) {
						if d["nextCursor"] == nil {
							delete(d, "nextCursor")
						}
					})
				}
			}),
		},
		{
			name: "bugs listed oldest first", rule: "LIST-2",
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/bugs") {
					r.data(func(d map[string]any) {
						items, _ := d["items"].([]any)
						slices.Reverse(items)
					})
				}
			}),
		},
		{
			name: "a page without limit holds 21 items", rule: "LIST-3",
			wrap: asks(func(req *http.Request) {
				if (isGet(req, "/v1/campaigns") || isGet(req, "/v1/bugs") || isGet(req, "/v1/testers")) && !req.URL.Query().Has("limit") {
					q := req.URL.Query()
					q.Set("limit", "21")
					req.URL.RawQuery = q.Encode()
				}
			}),
		},
		{
			name: "a page holds one item more than its limit", rule: "LIST-4",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/") {
					q := req.URL.Query()
					if n, err := strconv.Atoi(q.Get("limit")); err == nil && n >= 1 && n < 100 {
						q.Set("limit", strconv.Itoa(n+1))
						req.URL.RawQuery = q.Encode()
					}
				}
			}),
		},
		{
			name: "a limit out of bounds is taken as no limit", rule: "LIST-5",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/") {
					q := req.URL.Query()
					if n, err := strconv.Atoi(q.Get("limit")); q.Has("limit") && (err != nil || n < 1 || n > 100) {
						q.Del("limit")
						req.URL.RawQuery = q.Encode()
					}
				}
			}),
		},
		{
			name: "a cursor the API never gave starts from the first page", rule: "LIST-6",
			wrap: forgivingCursors,
		},
		{
			name: "hasMore is false on every page", rule: "LIST-7",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/") {
					r.data(func(d map[string]any) {
						if _, ok := d["hasMore"]; ok {
							d["hasMore"] = false
						}
					})
				}
			}),
		},
		{
			name: "the next page starts again at the last item of the page before", rule: "LIST-8",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/") {
					r.data(func(d map[string]any) {
						if c, ok := d["nextCursor"].(string); ok {
							d["nextCursor"] = cursorShifted(c, 1)
						}
					})
				}
			}),
		},
		{
			name: "a cursor is an offset into the list", rule: "LIST-9",
			wrap: offsetCursors,
		},
		{
			name: "a severity filter of high also gives critical bugs", rule: "LIST-10",
			wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					if isGet(req, "/v1/bugs") && req.URL.Query().Get("severity") == "high" && !req.URL.Query().Has("cursor") {
						q := req.URL.Query()
						q.Del("severity")
						q.Set("limit", "100")
						req.URL.RawQuery = q.Encode()
						breaking(next, nil, func(_ *http.Request, r *response) {
							r.keepItems(func(it map[string]any) bool { return it["severity"] == "high" || it["severity"] == "critical" })
						}).ServeHTTP(w, req)
						return
					}
					next.ServeHTTP(w, req)
				})
			},
		},
		{
			name: "filter values are read without regard to case", rule: "LIST-11",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/") {
					q := req.URL.Query()
					for _, f := range []string{"status", "platform", "severity"} {
						if q.Has(f) {
							q.Set(f, strings.ToLower(strings.TrimSpace(q.Get(f))))
						}
					}
					req.URL.RawQuery = q.Encode()
				}
			}),
		},
		{
			name: "a bugs filter naming no campaign is 404", rule: "LIST-12",
			wrap: func(next http.Handler) http.Handler {
				var known knownCampaigns
				return breaking(next, nil, func(req *http.Request, r *response) {
					id := req.URL.Query().Get("campaignId")
					if isGet(req, "/v1/bugs") && id != "" && r.status == http.StatusOK && !known.has(bearer(req), id) {
						r.status = http.StatusNotFound
						r.body = []byte(`{"success":false,"error":{"status":404,"code":"NOT_FOUND","message":"no such campaign"}}`)
					}
					known.learn(bearer(req), r.body)
				})
			},
		},
		{
			name: "of two filters only the first is applied", rule: "LIST-13",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/") {
					q := req.URL.Query()
					if q.Has("status") && (q.Has("platform") || q.Has("severity")) {
						q.Del("platform")
						q.Del("severity")
						req.URL.RawQuery = q.Encode()
					}
				}
			}),
		},
		{
			name: "the bugs list leaves out the bugs filed since the seed", rule: "BUG-1",
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/bugs") {
					r.keepItems(func(it map[string]any) bool {
						_, n, ok := idNumber(toString(it["id"]))
						return ok && n <= 9
					})
				}
			}),
		},
		{
			name: "the bugs list ignores its filters", rule: "BUG-2",
			wrap: asks(func(req *http.Request) {
				if isGet(req, "/v1/bugs") {
					q := req.URL.Query()
					for _, f := range []string{"status", "severity", "campaignId", "testerId"} {
						q.Del(f)
					}
					req.URL.RawQuery = q.Encode()
				}
			}),
		},
		{
			name: "a change answers the bug as it was before", rule: "BUG-3",
			wrap: func(next http.Handler) http.Handler {
				var bugs bugTracker
				return bugs.watch(next, func(req *http.Request, r *response) {
					if req.Method == http.MethodPatch && r.status == http.StatusOK {
						if old := bugs.before(bearer(req), strings.TrimPrefix(req.URL.Path, "/v1/bugs/")); old != nil {
							r.data(func(d map[string]any) { d["status"], d["resolution"] = old["status"], old["resolution"] })
						}
					}
				})
			},
		},
		{
			name: "bugs are listed without their description", rule: "BUG-4",
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/bugs") {
					r.eachItem(func(it map[string]any) { delete(it, "description") })
				}
			}),
		},
		{
			name: "critical bugs are shown as blocker", rule: "BUG-5",
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, func(req *http.Request) {
					req.URL.RawQuery = strings.ReplaceAll(req.URL.RawQuery, "severity=blocker", "severity=critical")
					replaceInBody(req, `"blocker"`, `"critical"`)
				}, func(req *http.Request, r *response) {
					if strings.HasPrefix(req.URL.Path, "/v1/bugs") || strings.HasPrefix(req.URL.Path, "/_sandbox/") {
						r.body = bytes.ReplaceAll(r.body, []byte(`"severity":"critical"`), []byte(`"severity":"blocker"`))
					}
				})
			},
		},
		{
			name: "the testerId filter is ignored", rule: "BUG-6",
			wrap: asks(func(req *http.Request) {
				if isGet(req, "/v1/bugs") {
					q := req.URL.Query()
					q.Del("testerId")
					req.URL.RawQuery = q.Encode()
				}
			}),
		},
		{
			name: "a new bug cannot be closed", rule: "BUG-8",
			wrap: refusingMove("new", "closed"),
		},
		{
			name: "a confirmed bug cannot be resolved", rule: "BUG-9",
			wrap: refusingMove("confirmed", "resolved"),
		},
		{
			name: "a bug in progress cannot be closed", rule: "BUG-10",
			wrap: refusingMove("in_progress", "closed"),
		},
		{
			name: "a resolved bug cannot be reopened", rule: "BUG-11",
			wrap: refusingMove("resolved", "confirmed"),
		},
		{
			name: "a closed bug cannot be reopened", rule: "BUG-12",
			wrap: refusingMove("closed", "confirmed"),
		},
		{
			name: "the resolution duplicate is refused", rule: "BUG-13",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPatch && strings.HasPrefix(req.URL.Path, "/v1/bugs/") {
					rewriteBody(req, func(m map[string]any) {
						if m["resolution"] == "duplicate" {
							m["resolution"] = "duplicated"
						}
					})
				}
			}),
		},
		{
			name: "a move to resolved without a resolution is taken as fixed", rule: "BUG-14",
			wrap: func(next http.Handler) http.Handler {
				var bugs bugTracker
				return bugs.watchBefore(next, func(req *http.Request) {
					if req.Method != http.MethodPatch {
						return
					}
					old := bugs.current(bearer(req), strings.TrimPrefix(req.URL.Path, "/v1/bugs/"))
					rewriteBody(req, func(m map[string]any) {
						_, hasRes := m["resolution"]
						if (m["status"] == "resolved" || m["status"] == "closed") && !hasRes && old != nil && old["resolution"] == nil {
							m["resolution"] = "fixed"
						}
					})
				})
			},
		},
		{
			name: "a reopen sent with a resolution drops the resolution", rule: "BUG-15",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPatch && strings.HasPrefix(req.URL.Path, "/v1/bugs/") {
					rewriteBody(req, func(m map[string]any) {
						if m["status"] == "confirmed" || m["status"] == "in_progress" {
							delete(m, "resolution")
						}
					})
				}
			}),
		},
		{
			name: "a resolution on an open bug is answered as taken", rule: "BUG-16",
			wrap: func(next http.Handler) http.Handler {
				var bugs bugTracker
				return bugs.watch(next, func(req *http.Request, r *response) {
					if req.Method != http.MethodPatch || r.status != http.StatusConflict {
						return
					}
					var sent map[string]any
					if json.Unmarshal(bugs.lastBody(req), &sent) != nil {
						return
					}
					if _, hasSt := sent["status"]; hasSt {
						return
					}
					if old := bugs.current(bearer(req), strings.TrimPrefix(req.URL.Path, "/v1/bugs/")); old != nil {
						b, _ := json.Marshal(map[string]any{"success": true, "data": old})
						r.status, r.body = http.StatusOK, b
					}
				})
			},
		},
		{
			name: "a resolved bug cannot change its resolution", rule: "BUG-17",
			wrap: asks(func(req *http.Request) {
				if req.Method == http.MethodPatch && strings.HasPrefix(req.URL.Path, "/v1/bugs/") {
					rewriteBody(req, func(m map[string]any) {
						if _, hasSt := m["status"]; !hasSt && m["resolution"] != nil {
							m["status"] = "new"
						}
					})
				}
			}),
		},
		{
			name: "a refused move still shows in the bugs list", rule: "BUG-18",
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				refused := map[string]string{}
				var bugs bugTracker
				return bugs.watch(next, func(req *http.Request, r *response) {
					key := bearer(req)
					if req.Method == http.MethodPatch && r.status == http.StatusConflict {
						var sent map[string]any
						if json.Unmarshal(bugs.lastBody(req), &sent) == nil && toString(sent["status"]) != "" {
							mu.Lock()
							refused[key+" "+strings.TrimPrefix(req.URL.Path, "/v1/bugs/")] = toString(sent["status"])
							mu.Unlock()
						}
					}
					if isGet(req, "/v1/bugs") {
						r.eachItem(func(it map[string]any) {
							mu.Lock()
							st, ok := refused[key+" "+toString(it["id"])]
							mu.Unlock()
							if ok {
								it["status"] = st
							}
						})
					}
				})
			},
		},
		{
			name: "an unknown status is a 409 transition error", rule: "BUG-19",
			wrap: answers(func(req *http.Request, r *response) {
				if req.Method == http.MethodPatch && r.status == http.StatusBadRequest && bytes.Contains(r.body, []byte("VALIDATION_ERROR")) {
					r.status = http.StatusConflict
					r.errorObject(func(e map[string]any) {
						e["status"], e["code"] = json.Number("409"), "INVALID_STATUS_TRANSITION"
						delete(e, "details")
					})
				}
			}),
		},
		{
			name: "sending a bug's own status answers a later updatedAt", rule: "BUG-20",
			wrap: func(next http.Handler) http.Handler {
				var bugs bugTracker
				return bugs.watch(next, func(req *http.Request, r *response) {
					if req.Method != http.MethodPatch || r.status != http.StatusOK {
						return
					}
					old := bugs.before(bearer(req), strings.TrimPrefix(req.URL.Path, "/v1/bugs/"))
					var sent map[string]any
					if old == nil || json.Unmarshal(bugs.lastBody(req), &sent) != nil || len(sent) != 1 || sent["status"] != old["status"] {
						return
					}
					r.data(func(d map[string]any) { d["updatedAt"] = plusSeconds(d["updatedAt"], 1) })
				})
			},
		},
		{
			name: "a change keeps the bug's updatedAt", rule: "BUG-21", opts: frozen,
			wrap: func(next http.Handler) http.Handler {
				var bugs bugTracker
				return bugs.watch(next, func(req *http.Request, r *response) {
					if req.Method == http.MethodPatch && r.status == http.StatusOK {
						if old := bugs.before(bearer(req), strings.TrimPrefix(req.URL.Path, "/v1/bugs/")); old != nil {
							r.data(func(d map[string]any) { d["updatedAt"] = old["updatedAt"] })
						}
					}
				})
			},
		},
		{
			name: "the testers list is not found", rule: "TST-1",
			wrap: asks(func(req *http.Request) {
				if req.URL.Path == "/v1/testers" {
					req.URL.Path = "/v1/tester"
				}
			}),
		},
		{
			name: "testers are listed without their country", rule: "TST-2",
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/testers") {
					r.eachItem(func(it map[string]any) { delete(it, "country") })
				}
			}),
		},
		{
			name: "the testers' platform filter is ignored", rule: "TST-3",
			wrap: asks(func(req *http.Request) {
				if isGet(req, "/v1/testers") {
					q := req.URL.Query()
					q.Del("platform")
					req.URL.RawQuery = q.Encode()
				}
			}),
		},
		{
			name: "analytics are not found", rule: "ANL-1",
			wrap: asks(func(req *http.Request) {
				if req.URL.Path == "/v1/analytics" {
					req.URL.Path = "/v1/analytic"
				}
			}),
		},
		{
			name: "analytics leave out the statuses no bug has", rule: "ANL-2",
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/analytics") {
					r.data(func(d map[string]any) {
						b, _ := d["bugs"].(map[string]any)
						for _, by := range []string{"byStatus", "bySeverity"} {
							counts, _ := b[by].(map[string]any)
							for k, v := range counts {
								if asNumber(v) == "0" {
									delete(counts, k)
								}
							}
						}
					})
				}
			}),
		},
		{
			name: "analytics count in_progress bugs as confirmed", rule: "ANL-3",
			wrap: answers(func(req *http.Request, r *response) {
				if isGet(req, "/v1/analytics") {
					r.data(func(d map[string]any) {
						b, _ := d["bugs"].(map[string]any)
						s, _ := b["byStatus"].(map[string]any)
						ip, _ := asNumber(s["in_progress"]).Int64()
						c, _ := asNumber(s["confirmed"]).Int64()
						if s != nil {
							s["confirmed"], s["in_progress"] = json.Number(strconv.FormatInt(c+ip, 10)), json.Number("0")
						}
					})
				}
			}),
		},
		{
			name: "analytics ignore campaignId", rule: "ANL-4",
			wrap: asks(func(req *http.Request) {
				if isGet(req, "/v1/analytics") {
					req.URL.RawQuery = ""
				}
			}),
		},
	}
}

// lendingRecords answers a campaign one key does not hold with another
// key's campaign of that id.
func lendingRecords(next http.Handler) http.Handler {
	var mu sync.Mutex
	keys := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
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
		breaking(next, nil, func(req *http.Request, r *response) {
			if req.Method != http.MethodGet || !strings.HasPrefix(req.URL.Path, "/v1/campaigns/") || r.status != http.StatusNotFound {
				return
			}
			for _, k := range others {
				if alt := sideRequest(next, k, http.MethodGet, req.URL.Path, ""); alt.Code == http.StatusOK {
					r.status, r.body = alt.Code, alt.Body.Bytes()
					return
				}
			}
		}).ServeHTTP(w, req)
	})
}

// replaceInBody replaces old with new in a request body.
func replaceInBody(r *http.Request, old, new string) {
	rewriteRaw(r, func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(old), []byte(new)) })
}

// replaceInBodyRe rewrites a request body's text, for changes a decoded
// body would lose (10.0 is not 10 to the API).
func replaceInBodyRe(r *http.Request, re *regexp.Regexp, repl string) {
	rewriteRaw(r, func(b []byte) []byte { return re.ReplaceAll(b, []byte(repl)) })
}

var numberedID = regexp.MustCompile(`^([a-z]+)_([0-9]+)$`)

// idNumber splits an ID such as cmp_000005 into its prefix and number.
func idNumber(id string) (string, int, bool) {
	m := numberedID.FindStringSubmatch(id)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(m[2])
	return m[1], n, err == nil
}

var campaignID = regexp.MustCompile(`cmp_[0-9]+`)

// seededTimestamp is a timestamp of a record the built-in fixtures seed:
// the first 4 campaigns, 9 bugs and 6 testers.
var seededTimestamp = regexp.MustCompile(`("id":"(?:cmp_00000[1-4]|bug_00000[1-9]|tst_00000[1-6])"[^{}]*?"(?:createdAt|updatedAt)":")([0-9T:.-]+Z)"`)

// anyTimestamp is a timestamp of the contract's form in a body.
var anyTimestamp = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z`)

// renumbered shows each new campaign of a key under its number plus
// shift(key, …) at the time it was made, and maps the shown numbers back
// in requests: a deployment whose IDs follow another sequence than the
// contract's, consistently.
func renumbered(next http.Handler, shift func(key string, req *http.Request, status int) int) http.Handler {
	var mu sync.Mutex
	shown := map[string]string{} // key and real id → shown id
	real := map[string]string{}  // key and shown id → real id
	mapIDs := func(key string, table map[string]string, s string) string {
		return campaignID.ReplaceAllStringFunc(s, func(id string) string {
			if v, ok := table[key+" "+id]; ok {
				return v
			}
			return id
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		key := bearer(req)
		breaking(next, func(req *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			req.URL.Path = mapIDs(key, real, req.URL.Path)
			req.URL.RawPath = ""
			req.URL.RawQuery = mapIDs(key, real, req.URL.RawQuery)
			rewriteRaw(req, func(b []byte) []byte { return []byte(mapIDs(key, real, string(b))) })
		}, func(req *http.Request, r *response) {
			n := shift(key, req, r.status)
			mu.Lock()
			defer mu.Unlock()
			if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" && r.status == http.StatusOK {
				r.data(func(d map[string]any) {
					id := toString(d["id"])
					if _, num, ok := idNumber(id); ok && n > 0 {
						s := fmt.Sprintf("cmp_%0*d", len(id)-len("cmp_"), num+n)
						shown[key+" "+id], real[key+" "+s] = s, id
					}
				})
			}
			r.body = []byte(mapIDs(key, shown, string(r.body)))
		}).ServeHTTP(w, req)
	})
}

// forgivingCursors answers a list asked with a cursor the API never gave
// as if no cursor had been sent.
func forgivingCursors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		if req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/v1/") && q.Has("cursor") {
			raw, err := base64.RawURLEncoding.DecodeString(q.Get("cursor"))
			if err != nil || !strings.HasPrefix(string(raw), "c1.") {
				q.Del("cursor")
				req.URL.RawQuery = q.Encode()
			}
		}
		next.ServeHTTP(w, req)
	})
}

// cursorShifted moves a sandbox cursor (the last item's sequence) by d.
func cursorShifted(c string, d int) string {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	seq, ok := strings.CutPrefix(string(raw), "c1.")
	n, err2 := strconv.Atoi(seq)
	if err != nil || !ok || err2 != nil {
		return c
	}
	return base64.RawURLEncoding.EncodeToString([]byte("c1." + strconv.Itoa(n+d)))
}

// offsetCursors pages the API's lists by offset: its cursor says how many
// items came before, so a record written between two pages shifts the
// next one.
func offsetCursors(next http.Handler) http.Handler {
	const prefix = "off."
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		lists := isGet(req, "/v1/campaigns") || isGet(req, "/v1/bugs") || isGet(req, "/v1/testers")
		if !lists {
			next.ServeHTTP(w, req)
			return
		}
		q := req.URL.Query()
		offset := 0
		if c := q.Get("cursor"); c != "" {
			raw, err := base64.RawURLEncoding.DecodeString(c)
			n, ok := strings.CutPrefix(string(raw), prefix)
			off, err2 := strconv.Atoi(n)
			if err != nil || !ok || err2 != nil {
				next.ServeHTTP(w, req)
				return
			}
			offset = off
		}
		limit := 20
		if l := q.Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil || n < 1 || n > 100 {
				next.ServeHTTP(w, req)
				return
			}
			limit = n
		}
		q.Del("cursor")
		q.Set("limit", "100")
		req.URL.RawQuery = q.Encode()
		breaking(next, nil, func(_ *http.Request, r *response) {
			r.data(func(d map[string]any) {
				items, _ := d["items"].([]any)
				end := min(offset+limit, len(items))
				page := append([]any{}, items[min(offset, len(items)):end]...)
				more := end < len(items) || d["hasMore"] == true
				d["items"], d["hasMore"], d["nextCursor"] = page, more, nil
				if more {
					d["nextCursor"] = base64.RawURLEncoding.EncodeToString([]byte(prefix + strconv.Itoa(end)))
				}
			})
		}).ServeHTTP(w, req)
	})
}

// knownCampaigns keeps, per key, the campaign IDs its answers showed.
type knownCampaigns struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (k *knownCampaigns) learn(key string, body []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ids == nil {
		k.ids = map[string]bool{}
	}
	for _, id := range campaignID.FindAll(body, -1) {
		k.ids[key+" "+string(id)] = true
	}
}

func (k *knownCampaigns) has(key, id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ids[key+" "+id]
}

// bugTracker keeps, per key, every bug as the sandbox last answered it,
// for breakers that need a bug's state before a change.
type bugTracker struct {
	mu     sync.Mutex
	bugs   map[string]map[string]any // key and id → bug
	prior  map[string]map[string]any // key and id → bug before the last change
	bodies sync.Map                  // *http.Request → its body
}

func (b *bugTracker) current(key, id string) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bugs[key+" "+id]
}

func (b *bugTracker) before(key, id string) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.prior[key+" "+id]
}

func (b *bugTracker) lastBody(req *http.Request) []byte {
	v, _ := b.bodies.Load(req)
	body, _ := v.([]byte)
	return body
}

// learn keeps every bug a response holds.
func (b *bugTracker) learn(key string, req *http.Request, r *response) {
	var v struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(r.body, &v) != nil {
		return
	}
	var one map[string]any
	var list struct {
		Items []map[string]any `json:"items"`
	}
	var found []map[string]any
	if json.Unmarshal(v.Data, &list) == nil && list.Items != nil {
		found = list.Items
	} else if json.Unmarshal(v.Data, &one) == nil {
		found = []map[string]any{one}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bugs == nil {
		b.bugs, b.prior = map[string]map[string]any{}, map[string]map[string]any{}
	}
	for _, bug := range found {
		id := toString(bug["id"])
		if !strings.HasPrefix(id, "bug_") {
			continue
		}
		if req.Method == http.MethodPatch {
			b.prior[key+" "+id] = b.bugs[key+" "+id]
		}
		b.bugs[key+" "+id] = bug
	}
}

// watch passes every exchange through edit after learning the bugs of
// the sandbox's own answer.
func (b *bugTracker) watch(next http.Handler, edit func(*http.Request, *response)) http.Handler {
	return breaking(next, func(req *http.Request) {
		b.bodies.Store(req, keepBody(req))
	}, func(req *http.Request, r *response) {
		b.learn(bearer(req), req, r)
		edit(req, r)
		b.bodies.Delete(req)
	})
}

// watchBefore learns the bugs of every answer and lets edit change each
// request first.
func (b *bugTracker) watchBefore(next http.Handler, edit func(*http.Request)) http.Handler {
	return breaking(next, edit, func(req *http.Request, r *response) { b.learn(bearer(req), req, r) })
}

// refusingMove refuses the move from one status to another, as a
// lifecycle table missing it would: the sandbox itself is asked a move it
// refuses, so the answer is its own 409.
func refusingMove(from, to string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		var bugs bugTracker
		return bugs.watchBefore(next, func(req *http.Request) {
			if req.Method != http.MethodPatch || !strings.HasPrefix(req.URL.Path, "/v1/bugs/") {
				return
			}
			old := bugs.current(bearer(req), strings.TrimPrefix(req.URL.Path, "/v1/bugs/"))
			if old == nil || old["status"] != from {
				return
			}
			rewriteBody(req, func(m map[string]any) {
				if m["status"] == to {
					m["status"] = impossibleFrom[from]
				}
			})
		})
	}
}

// impossibleFrom is a move the contract refuses from each status.
var impossibleFrom = map[string]string{"new": "in_progress", "confirmed": "new", "in_progress": "new", "resolved": "in_progress", "closed": "resolved"}

// exploredProofs are breaks of other areas' rules that only show across
// requests, which the explorer's model once found by chance and the
// default run now makes on purpose.
func exploredProofs() []proof {
	var postsPerKey sync.Map
	return []proof{
		{
			name: "every POST counts twice, visible only across requests", rule: "RATE-7",
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, nil, func(req *http.Request, r *response) {
					if r.header.Get("X-RateLimit-Remaining") == "" || !strings.HasPrefix(req.URL.Path, "/v1") {
						return
					}
					n, _ := postsPerKey.LoadOrStore(bearer(req), new(atomic.Int64))
					p := n.(*atomic.Int64)
					if req.Method == http.MethodPost {
						p.Add(1)
					}
					r.header.Set("X-RateLimit-Remaining", strconv.Itoa(max(intHeader(r.header, "X-RateLimit-Remaining")-int(p.Load()), 0)))
				})
			},
		},
		{
			name: "the request log leaves out refused requests", rule: "JRNL-1",
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, nil, func(req *http.Request, r *response) {
					if req.URL.Path == "/_sandbox/requests" {
						r.keepItems(func(it map[string]any) bool {
							n, err := asNumber(it["status"]).Int64()
							return err != nil || n < 400
						})
					}
				})
			},
		},
		{
			name: "a filed bug's event is not recorded", rule: "EVT-1",
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, nil, func(req *http.Request, r *response) {
					if req.URL.Path == "/_sandbox/events" {
						r.keepItems(func(it map[string]any) bool { return it["type"] != "bug.created" })
					}
				})
			},
		},
		{
			name: "records stamped with the real clock, not the account's frozen one", rule: "CLK-7", opts: frozen,
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, nil, func(req *http.Request, r *response) {
					if req.Method == http.MethodPost && req.URL.Path == "/v1/campaigns" {
						r.data(func(d map[string]any) { d["createdAt"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z") })
					}
				})
			},
		},
		{
			name: "a reset keeps a campaign", rule: "RESET-2",
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, nil, func(req *http.Request, r *response) {
					if req.Method == http.MethodPost && req.URL.Path == "/_sandbox/reset" && r.status == http.StatusOK {
						sideRequest(next, bearer(req), http.MethodPost, "/v1/campaigns", ghostCampaign)
					}
				})
			},
		},
	}
}

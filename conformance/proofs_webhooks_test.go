package conformance_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// webhookProofs break one rule each of webhooks, events and deliveries (WH, EVT, DLV).
// A registration is changed on its way in and its answer on its way out;
// the deliveries, which no proxy sees, go through a relay (relay_test.go).
func webhookProofs() []proof {
	viaRelay := func(rel func() *relay) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler { return relaying(next, rel()) }
	}
	delivering := func(deliver func(d *relayed, send func(*relayed) int) int) func(http.Handler) http.Handler {
		return viaRelay(func() *relay { return &relay{deliver: deliver} })
	}
	records := func(edit func(it map[string]any)) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return onControls(next, nil, func(req *http.Request, r *response) {
				if isGet(req, "/_sandbox/deliveries") {
					r.eachItem(edit)
				}
			})
		}
	}
	return []proof{
		{name: "relaying, running clock", wrap: viaRelay(func() *relay { return &relay{} })},
		{name: "relaying, frozen clock", opts: frozen, wrap: viaRelay(func() *relay { return &relay{} })},
		{
			name: "a registration answered outside the envelope", rule: "WH-1",
			caught: []string{"Registering conform's receiver succeeds"},
			wrap: func(next http.Handler) http.Handler {
				return breaking(next, nil, func(req *http.Request, r *response) {
					if req.Method == http.MethodPost && req.URL.Path == "/v1/webhooks" && r.status == http.StatusOK {
						r.envelope(func(m map[string]any) {
							data, _ := m["data"].(map[string]any)
							clear(m)
							for k, v := range data {
								m[k] = v
							}
						})
					}
				})
			},
		},
		{
			name: "an ftp url registered", rule: "WH-2",
			caught: []string{"An invalid registration is 400 VALIDATION_ERROR: an ftp url"},
			wrap: registering(func(in map[string]any) func(out map[string]any) {
				u := toString(in["url"])
				if !strings.HasPrefix(u, "ftp://") {
					return nil
				}
				in["url"] = "http://" + strings.TrimPrefix(u, "ftp://")
				return func(out map[string]any) { out["url"] = u }
			}),
		},
		{
			name: "an unknown event type registered", rule: "WH-3",
			caught: []string{"An invalid registration is 400 VALIDATION_ERROR: an unknown event"},
			wrap: registering(func(in map[string]any) func(out map[string]any) {
				events, _ := in["events"].([]any)
				sent := slices.Clone(events)
				unknown := false
				for i, e := range events {
					if !slices.Contains([]any{"campaign.created", "bug.created", "bug.updated", "*"}, e) {
						events[i], unknown = "bug.created", true
					}
				}
				if !unknown {
					return nil
				}
				return func(out map[string]any) { out["events"] = sent }
			}),
		},
		{
			name: "an event type listed twice kept twice", rule: "WH-4",
			caught: []string{"An event type listed twice is kept once"},
			wrap: registering(func(in map[string]any) func(out map[string]any) {
				events, _ := in["events"].([]any)
				sent := slices.Clone(events)
				return func(out map[string]any) {
					if kept, _ := out["events"].([]any); len(kept) < len(sent) {
						out["events"] = sent
					}
				}
			}),
		},
		{
			name: "a webhook registered as enabled", rule: "WH-5",
			caught: []string{"A registered webhook comes back with its signing secret"},
			wrap: registering(func(map[string]any) func(out map[string]any) {
				return func(out map[string]any) { out["status"] = "enabled" }
			}),
		},
		refusedWebhooksCountProof(),
		{
			name: "the same URL registered twice is one webhook", rule: "WH-7",
			caught: []string{"Two webhooks for one event are each sent it once, with one Webhook-Id, and recorded apart"},
			opts:   sandboxtest.Options{WrapStore: func(s sandbox.Store) sandbox.Store { return oneWebhookAnURL{s} }},
			wrap:   func(next http.Handler) http.Handler { return next },
		},
		{
			name: "webhook secrets drawn at random", rule: "WH-8",
			caught: []string{"A reset keeps webhook secrets derivable"},
			wrap: viaRelay(func() *relay {
				return &relay{shownSecret: func(secret string, _ map[string]any) string {
					return secret + rand.Text()[:4]
				}}
			}),
		},
		refusedWritesEmitProof(),
		{
			name: "every event delivered whatever the subscription", rule: "DLV-1",
			caught: []string{"Only the subscribed event types are delivered"},
			wrap: registering(func(in map[string]any) func(out map[string]any) {
				sent := in["events"]
				in["events"] = []any{"*"}
				return func(out map[string]any) { out["events"] = sent }
			}),
		},
		{
			name: "a delivery carries its attempt beside the event", rule: "DLV-2",
			caught: []string{"A delivery is the event as listed, and a 2xx ends it after one attempt"},
			wrap: delivering(func(d *relayed, send func(*relayed) int) int {
				d.editBody(func(e map[string]any) { e["attempt"] = json.Number("1") })
				return send(d)
			}),
		},
		{
			name: "a Webhook-Id in upper-case hex", rule: "DLV-3",
			caught: []string{"A delivery is the event as listed, and a 2xx ends it after one attempt"},
			wrap: delivering(func(d *relayed, send func(*relayed) int) int {
				d.header.Set("Webhook-Id", "msg_"+strings.ToUpper(strings.TrimPrefix(d.header.Get("Webhook-Id"), "msg_")))
				return send(d)
			}),
		},
		{
			name: "a retry under a new Webhook-Id", rule: "DLV-4",
			caught: []string{"A delivery answered with 500 is retried with the same Webhook-Id"},
			wrap: func(next http.Handler) http.Handler {
				var seen perKey
				return relaying(next, &relay{deliver: func(d *relayed, send func(*relayed) int) int {
					id := d.header.Get("Webhook-Id")
					if n := seen.add(d.route.relayURL+id, 1); n > 1 {
						d.header.Set("Webhook-Id", messageID(id+strconv.Itoa(n)))
					}
					return send(d)
				}})
			},
		},
		{
			name: "a Webhook-Id kept across a reset", rule: "DLV-5",
			caught: []string{"Webhook-Id differs after a reset of the account"},
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				first := map[string]string{}
				return relaying(next, &relay{deliver: func(d *relayed, send func(*relayed) int) int {
					k := d.route.key + " " + d.eventID()
					mu.Lock()
					if id, ok := first[k]; ok {
						d.header.Set("Webhook-Id", id)
					} else {
						first[k] = d.header.Get("Webhook-Id")
					}
					mu.Unlock()
					return send(d)
				}})
			},
		},
		{
			name: "Webhook-Timestamp in milliseconds", rule: "DLV-6",
			caught: []string{"A campaign.created event is delivered, signed with the secret"},
			wrap: delivering(func(d *relayed, send func(*relayed) int) int {
				d.header.Set("Webhook-Timestamp", d.header.Get("Webhook-Timestamp")+"000")
				d.resign()
				return send(d)
			}),
		},
		{
			name: "a signature over the body alone", rule: "DLV-7",
			caught: []string{"A campaign.created event is delivered, signed with the secret"},
			wrap: delivering(func(d *relayed, send func(*relayed) int) int {
				mac := hmacSHA256(d.secret, d.body)
				d.header.Set("Webhook-Signature", "v1="+mac)
				return send(d)
			}),
		},
		{
			name: "a delivery answered 2xx sent twice", rule: "DLV-8",
			caught: []string{"A delivery is the event as listed, and a 2xx ends it after one attempt"},
			wrap: delivering(func(d *relayed, send func(*relayed) int) int {
				if status := send(d.clone()); status < 200 || status > 299 {
					return status
				}
				return send(d)
			}),
		},
		{
			name: "a retry carries another body", rule: "DLV-9",
			caught: []string{"A delivery answered with 500 is retried with the same Webhook-Id"},
			wrap: func(next http.Handler) http.Handler {
				var seen perKey
				return relaying(next, &relay{deliver: func(d *relayed, send func(*relayed) int) int {
					if n := seen.add(d.route.relayURL+d.header.Get("Webhook-Id"), 1); n > 1 {
						d.editBody(func(e map[string]any) { e["retry"] = true })
					}
					return send(d)
				}})
			},
		},
		{
			name: "a redirect taken for a delivery", rule: "DLV-10",
			caught: []string{"A redirect is a failed attempt, not followed"},
			wrap: delivering(func(d *relayed, send func(*relayed) int) int {
				status := send(d)
				if status >= 300 && status < 400 {
					return http.StatusOK
				}
				return status
			}),
		},
		{
			name: "a sixth attempt", rule: "DLV-12", opts: frozen,
			caught: []string{"Moving the clock past a retry makes it due at once, along the whole backoff schedule"},
			wrap: func(next http.Handler) http.Handler {
				var seen perKey
				return relaying(next, &relay{deliver: func(d *relayed, send func(*relayed) int) int {
					status := send(d.clone())
					if seen.add(d.route.relayURL+d.header.Get("Webhook-Id"), 1) == 5 && (status < 200 || status > 299) {
						send(d)
					}
					return status
				}})
			},
		},
		{
			name: "retries due in real time only, whatever the clock", rule: "DLV-13", opts: frozen,
			caught: []string{"A retry the moved clock passed comes at once, long before its time in real time"},
			// The sandbox is told at once what the receiver answered the
			// attempt before, so that nothing is in flight for a control to
			// wait for (CLK-10), and the receiver gets the retry when the
			// backoff has passed in real time.
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				due := map[string]time.Time{}
				answered := map[string]int{}
				var seen perKey
				rel := &relay{}
				rel.deliver = func(d *relayed, send func(*relayed) int) int {
					k := d.route.relayURL + d.header.Get("Webhook-Id")
					n := seen.add(k, 1)
					if n == 1 {
						status := send(d)
						mu.Lock()
						due[k], answered[k] = time.Now(), status
						mu.Unlock()
						return status
					}
					mu.Lock()
					due[k] = due[k].Add(time.Second << (n - 2))
					at, status := due[k], answered[k]
					mu.Unlock()
					rel.sendLater(d, time.Until(at))
					return status
				}
				return relaying(next, rel)
			},
		},
		{
			name: "a successful attempt says another is due", rule: "DLV-15",
			caught: []string{"A delivery is the event as listed, and a 2xx ends it after one attempt"},
			wrap: records(func(it map[string]any) {
				if it["error"] == "" && it["nextAttemptAt"] == nil {
					it["nextAttemptAt"] = plusSeconds(it["at"], 1)
				}
			}),
		},
		{
			name: "a link-local destination tried", rule: "DLV-17",
			caught: []string{"A link-local destination is refused once and never retried"},
			wrap: records(func(it map[string]any) {
				if strings.HasPrefix(toString(it["url"]), "http://169.254.") {
					it["error"], it["nextAttemptAt"] = "timeout", plusSeconds(it["at"], 1)
				}
			}),
		},
		{
			name: "a reset leaves a retry to come", rule: "DLV-24",
			caught: []string{"A reset cancels the pending retries"},
			wrap: func(next http.Handler) http.Handler {
				var mu sync.Mutex
				failed := map[string]*relayed{}
				rel := &relay{deliver: func(d *relayed, send func(*relayed) int) int {
					status := send(d.clone())
					mu.Lock()
					if status < 200 || status > 299 {
						failed[d.route.key] = d
					} else {
						delete(failed, d.route.key)
					}
					mu.Unlock()
					return status
				}}
				return relaying(breaking(next, nil, func(req *http.Request, r *response) {
					if req.URL.Path != "/_sandbox/reset" || r.status != http.StatusOK {
						return
					}
					mu.Lock()
					d := failed[bearer(req)]
					delete(failed, bearer(req))
					mu.Unlock()
					if d != nil {
						rel.sendLater(d, time.Second)
					}
				}), rel)
			},
		},
		{
			name: "delivery records read before they are written", rule: "DLV-25",
			caught: []string{"A delivery the receiver got is in the delivery records read at once, without a settle"},
			wrap: func(next http.Handler) http.Handler {
				return onControls(next, nil, func(req *http.Request, r *response) {
					if isGet(req, "/_sandbox/deliveries") {
						r.keepItems(func(it map[string]any) bool {
							at, err := time.Parse(time.RFC3339Nano, toString(it["at"]))
							return err != nil || time.Since(at) > time.Second
						})
					}
				})
			},
		},
		{
			name: "X-Sandbox-Now in milliseconds", rule: "DLV-26",
			caught: []string{"A delivery the receiver got is in the delivery records read at once, without a settle"},
			wrap: delivering(func(d *relayed, send func(*relayed) int) int {
				d.header.Set("X-Sandbox-Now", d.header.Get("X-Sandbox-Now")+"000")
				return send(d)
			}),
		},
		{
			name: "X-Sandbox-Now equal to a stale Webhook-Timestamp", rule: "DLV-26",
			caught: []string{"Bad-signature and stale-timestamp webhook faults make deliveries a receiver must refuse"},
			wrap: delivering(func(d *relayed, send func(*relayed) int) int {
				d.header.Set("X-Sandbox-Now", d.header.Get("Webhook-Timestamp"))
				return send(d)
			}),
		},
	}
}

// registering changes a registration's request on its way to the sandbox
// with change, and its answer's data with what change returns (nil leaves
// the answer alone), so that a sandbox can be told one thing and answer
// another.
func registering(change func(in map[string]any) func(out map[string]any)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method != http.MethodPost || req.URL.Path != "/v1/webhooks" {
				next.ServeHTTP(w, req)
				return
			}
			var restore func(out map[string]any)
			rewriteBody(req, func(in map[string]any) { restore = change(in) })
			breaking(next, nil, func(_ *http.Request, r *response) {
				if restore != nil && r.status == http.StatusOK {
					r.data(restore)
				}
			}).ServeHTTP(w, req)
		})
	}
}

// messageID is a Webhook-Id of the right form made from s.
func messageID(s string) string {
	h := sha256.Sum256([]byte(s))
	return "msg_" + hex.EncodeToString(h[:16])
}

func hmacSHA256(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// refusedWebhooksCountProof is a sandbox whose cap of 16 webhooks counts
// the registrations it refused: the proxy counts each key's 400s and the
// store, told the count with the request, refuses the webhook that would
// make 16 with them.
func refusedWebhooksCountProof() proof {
	return proof{
		name: "a refused registration counted toward the cap", rule: "WH-6",
		caught: []string{"A refused registration does not count toward the 16 webhooks of an account"},
		opts: sandboxtest.Options{WrapStore: func(s sandbox.Store) sandbox.Store {
			return refusalsCounted{Store: s}
		}},
		wrap: func(next http.Handler) http.Handler {
			var refused perKey
			counting := breaking(next, nil, func(req *http.Request, r *response) {
				switch {
				case req.URL.Path == "/_sandbox/reset" && r.status == http.StatusOK:
					refused.add(bearer(req), -refused.add(bearer(req), 0))
				case req.Method == http.MethodPost && req.URL.Path == "/v1/webhooks" && r.status == http.StatusBadRequest:
					refused.add(bearer(req), 1)
				}
			})
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if req.Method == http.MethodPost && req.URL.Path == "/v1/webhooks" {
					req = req.WithContext(context.WithValue(req.Context(), refusedKey{}, refused.add(bearer(req), 0)))
				}
				counting.ServeHTTP(w, req)
			})
		},
	}
}

// refusedKey carries, on a registration's context, how many registrations
// of its key the sandbox refused.
type refusedKey struct{}

type refusalsCounted struct{ sandbox.Store }

func (s refusalsCounted) CreateWebhook(ctx context.Context, in sandbox.WebhookInput) (sandbox.Webhook, error) {
	refused, _ := ctx.Value(refusedKey{}).(int)
	hooks, err := s.Webhooks(ctx)
	if err != nil {
		return sandbox.Webhook{}, err
	}
	if len(hooks)+refused >= 16 {
		return sandbox.Webhook{}, sandbox.Errorf(sandbox.ErrLimitReached, "the account already holds 16 webhooks, as many as it may")
	}
	return s.Store.CreateWebhook(ctx, in)
}

// oneWebhookAnURL answers a registration of a URL already registered with
// the webhook that has it.
type oneWebhookAnURL struct{ sandbox.Store }

func (s oneWebhookAnURL) CreateWebhook(ctx context.Context, in sandbox.WebhookInput) (sandbox.Webhook, error) {
	hooks, err := s.Webhooks(ctx)
	if err != nil {
		return sandbox.Webhook{}, err
	}
	for _, h := range hooks {
		if h.URL == in.URL {
			return h, nil
		}
	}
	return s.Store.CreateWebhook(ctx, in)
}

// refusedWritesEmitProof is a sandbox that records an event for a write it
// refused: each key's refused writes show in its events list, newest
// first, as the events of writes carried out would.
func refusedWritesEmitProof() proof {
	return proof{
		name: "a refused write emits an event", rule: "EVT-3",
		caught: []string{"A refused write emits no event"},
		wrap: func(next http.Handler) http.Handler {
			var mu sync.Mutex
			ghosts := map[string][]any{}
			return breakingWithBody(next, func(req *http.Request, body []byte, r *response) {
				key := bearer(req)
				switch {
				case req.URL.Path == "/_sandbox/reset" && r.status == http.StatusOK:
					mu.Lock()
					delete(ghosts, key)
					mu.Unlock()
				case isGet(req, "/_sandbox/events") && req.URL.RawQuery == "":
					mu.Lock()
					extra := slices.Clone(ghosts[key])
					mu.Unlock()
					if len(extra) > 0 {
						r.data(func(d map[string]any) {
							items, _ := d["items"].([]any)
							d["items"] = append(extra, items...)
						})
					}
				case (req.Method == http.MethodPost || req.Method == http.MethodPatch) && r.status >= 400 && r.status < 500 &&
					(req.URL.Path == "/v1/campaigns" || req.URL.Path == "/_sandbox/bugs" || strings.HasPrefix(req.URL.Path, "/v1/bugs/")):
					var data any
					_ = json.Unmarshal(body, &data)
					typ := map[string]string{"/v1/campaigns": "campaign.created", "/_sandbox/bugs": "bug.created"}[req.URL.Path]
					if typ == "" {
						typ = "bug.updated"
					}
					mu.Lock()
					n := len(ghosts[key])
					ghosts[key] = append([]any{map[string]any{
						"id": fmt.Sprintf("evt_9%05d", n), "type": typ, "data": data,
						"createdAt": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
					}}, ghosts[key]...)
					mu.Unlock()
				}
			})
		},
	}
}

package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/testcampaign/kit/sandbox/webhook"
)

// A relay breaks a sandbox's webhook deliveries, which no proxy in front
// of it sees: it tells the sandbox, at registration, a URL of its own in
// place of conform's receiver, takes each delivery there, and carries it
// on to the receiver as deliver says. Every answer that shows the URL (the
// registration, the delivery records, the journal) shows the receiver's
// again, and the relay's URL is as long as the receiver's, so that no
// count of bytes tells them apart. The relay is served by the handler
// that wraps the sandbox, under paths no route of the API has.
type relay struct {
	// deliver carries a delivery to the receiver with send, which answers
	// the receiver's status (0 when it could not be reached), and returns
	// the status the sandbox is told; nil sends each delivery as it came.
	deliver func(d *relayed, send func(*relayed) int) int
	// shownSecret is the secret a registration answers in place of the
	// one the sandbox made, the one deliveries are then signed with; nil
	// shows the sandbox's.
	shownSecret func(secret string, webhook map[string]any) string

	mu      sync.Mutex
	routes  map[string]*route // by the relay path's first segment
	byKey   map[string][]*route
	counter int
	client  *http.Client
}

// route is one registration the relay stands in for.
type route struct {
	key, receiverURL, relayURL string
	secret                     string // as the registration answered it
}

// relayed is one delivery on its way through the relay.
type relayed struct {
	route  *route
	secret string // the route's, as the delivery came
	header http.Header
	body   []byte
}

// resign signs the delivery again, as the sandbox does, over its
// Webhook-Timestamp and body.
func (d *relayed) resign() {
	timestamp, _ := strconv.ParseInt(d.header.Get("Webhook-Timestamp"), 10, 64)
	d.header.Set("Webhook-Signature", webhook.Signature(d.secret, timestamp, d.body))
}

// editBody lets edit change the delivery's JSON body, and signs it again.
func (d *relayed) editBody(edit func(event map[string]any)) {
	var ok bool
	if d.body, ok = editObject(d.body, edit); ok {
		d.resign()
	}
}

// eventID is the id of the event the delivery carries.
func (d *relayed) eventID() string {
	var e struct{ ID string }
	_ = json.Unmarshal(d.body, &e)
	return e.ID
}

func (d *relayed) clone() *relayed {
	return &relayed{route: d.route, secret: d.secret, header: d.header.Clone(), body: bytes.Clone(d.body)}
}

// relayPrefix starts every path the relay serves; no route of the API or
// the controls does.
const relayPrefix = "/~"

// relaying wraps the sandbox in rel.
func relaying(next http.Handler, rel *relay) http.Handler {
	rel.routes, rel.byKey = map[string]*route{}, map[string][]*route{}
	rel.client = &http.Client{
		Transport:     &http.Transport{Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	shows := func(req *http.Request, r *response) {
		rel.mu.Lock()
		routes := rel.byKey[bearer(req)]
		rel.mu.Unlock()
		for _, rt := range routes {
			r.body = bytes.ReplaceAll(r.body, []byte(rt.relayURL), []byte(rt.receiverURL))
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case strings.HasPrefix(req.URL.Path, relayPrefix):
			rel.serveDelivery(w, req)
		case req.Method == http.MethodPost && req.URL.Path == "/v1/webhooks":
			rt := rel.register(req)
			breaking(next, nil, func(req *http.Request, r *response) {
				if r.status == http.StatusOK {
					rel.registered(rt, r)
				}
				shows(req, r)
			}).ServeHTTP(w, req)
		case strings.HasPrefix(req.URL.Path, "/_sandbox/"):
			breaking(next, nil, shows).ServeHTTP(w, req)
		default:
			next.ServeHTTP(w, req)
		}
	})
}

// register tells the sandbox the relay's URL in place of the receiver's,
// byte for byte as long, and returns the route; nil leaves the request as
// it was (a URL not of conform's receiver, or one the relay cannot match
// in length).
func (rel *relay) register(req *http.Request) *route {
	body := keepBody(req)
	var in struct{ URL string }
	if json.Unmarshal(body, &in) != nil {
		return nil
	}
	u, err := url.Parse(in.URL)
	if err != nil || u.Hostname() != "127.0.0.1" || !strings.HasPrefix(u.Path, "/hooks/") || !bytes.Contains(body, []byte(`"`+in.URL+`"`)) {
		return nil
	}
	rel.mu.Lock()
	defer rel.mu.Unlock()
	rel.counter++
	segment := fmt.Sprintf("%s%04d", relayPrefix, rel.counter%10000)
	relayURL := "http://" + req.Host + segment + "/" + strings.TrimPrefix(in.URL, u.Scheme+"://"+u.Host+"/hooks/")
	if len(relayURL) != len(in.URL) {
		return nil
	}
	rt := &route{key: bearer(req), receiverURL: in.URL, relayURL: relayURL}
	rel.routes[segment] = rt
	rel.byKey[rt.key] = append(rel.byKey[rt.key], rt)
	body = bytes.ReplaceAll(body, []byte(`"`+in.URL+`"`), []byte(`"`+relayURL+`"`))
	req.Body = io.NopCloser(bytes.NewReader(body))
	return rt
}

// registered shows the secret a registration answers as the relay shows
// it, and keeps it for the route, if the relay stands in for the webhook.
func (rel *relay) registered(rt *route, r *response) {
	r.data(func(d map[string]any) {
		secret := toString(d["secret"])
		if rel.shownSecret != nil {
			secret = rel.shownSecret(secret, d)
			d["secret"] = secret
		}
		if rt == nil {
			return
		}
		rel.mu.Lock()
		rt.secret = secret
		rel.mu.Unlock()
	})
}

// serveDelivery takes a delivery the sandbox made to the relay on to the
// receiver, as deliver says.
func (rel *relay) serveDelivery(w http.ResponseWriter, req *http.Request) {
	segment, _, _ := strings.Cut(strings.TrimPrefix(req.URL.Path, relayPrefix), "/")
	rel.mu.Lock()
	rt := rel.routes[relayPrefix+segment]
	var secret string
	if rt != nil {
		secret = rt.secret
	}
	rel.mu.Unlock()
	body, err := io.ReadAll(req.Body)
	if rt == nil || err != nil {
		http.NotFound(w, req)
		return
	}
	d := &relayed{route: rt, secret: secret, header: req.Header.Clone(), body: body}
	if rel.shownSecret != nil {
		d.resign()
	}
	send := func(d *relayed) int { return rel.send(req.Context(), d) }
	status := 0
	if rel.deliver != nil {
		status = rel.deliver(d, send)
	} else {
		status = send(d)
	}
	if status == 0 {
		// The receiver gave no answer: neither does the relay.
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
			return
		}
		status = http.StatusBadGateway
	}
	w.WriteHeader(status)
}

// relayTimeout bounds a delivery the relay sends on its own, with no
// attempt of the sandbox's waiting for it: as long as an attempt has.
const relayTimeout = 10 * time.Second

// send posts d to the receiver, within the attempt that carried it when
// there is one (ctx), and answers its status, 0 when it gave none.
func (rel *relay) send(ctx context.Context, d *relayed) int {
	out, err := http.NewRequestWithContext(ctx, http.MethodPost, d.route.receiverURL, bytes.NewReader(d.body))
	if err != nil {
		return 0
	}
	out.Header = d.header.Clone()
	res, err := rel.client.Do(out)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode
}

// sendLater sends d on its own after wait, as a sandbox would a retry it
// should not make.
func (rel *relay) sendLater(d *relayed, wait time.Duration) {
	time.AfterFunc(wait, func() {
		ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
		defer cancel()
		rel.send(ctx, d)
	})
}

package webhook

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

// Signature is the Webhook-Signature value for a body sent at timestamp: the
// hex HMAC-SHA256 of "<timestamp>.<body>", keyed with the whole secret.
func Signature(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", timestamp)
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// MessageID is the Webhook-Id of an event's deliveries: "msg_" and the first
// 32 hex digits of the SHA-256 of the account's identity, a zero byte and
// the event ID. Event IDs repeat across accounts, since every account numbers
// its own from evt_000001; the identity (see Keys.Identity), derived from the
// key with the server secret and changing with every reset, makes the
// Webhook-Id unique across accounts and resets while every retry of one
// event, and every webhook it goes to, carries the same one, so receivers
// can de-duplicate on it.
func MessageID(identity, eventID string) string {
	h := sha256.New()
	h.Write([]byte(identity))
	h.Write([]byte{0})
	h.Write([]byte(eventID))
	return "msg_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// NowHeader carries, on every delivery, the account's clock in Unix seconds
// as the attempt was made.
const NowHeader = "X-Sandbox-Now"

// Reasons a failed attempt records. None names an address or quotes a
// network error, which could tell a caller about the sandbox's network.
const (
	reasonEgress  = "destination not allowed by the sandbox's egress policy"
	reasonTimeout = "timeout"
	reasonRefused = "connection refused"
	reasonDNS     = "host name not found"
	reasonTLS     = "TLS failed"
	reasonFailed  = "connection failed"
	reasonBadURL  = "webhook URL not usable"
)

// result is how an attempt went: the receiver's status (0 without an
// answer), why it failed (empty on success) and whether trying again might
// help.
type result struct {
	status  int
	failure string
	retry   bool
}

// errAttemptTimeout is why an attempt is cut short: it ran out of time, or
// out of room when it left the fast lane.
var errAttemptTimeout = errors.New("attempt timed out")

// targetKey carries a request's resolved addresses to the dialer.
type targetKey struct{}

// newClient returns the client of every delivery: no proxy (the egress policy
// must see the receiver's address, not a proxy's), a dialer that connects
// only to the addresses the delivery was resolved to, and redirects returned
// rather than followed, so that a receiver cannot send a delivery somewhere
// its URL does not say.
func newClient(p policy, opts Options) *http.Client {
	transport := &http.Transport{
		DialContext:            pinnedDialer(p, opts.AttemptTimeout),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    opts.AttemptTimeout,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    opts.PerHost,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// pinnedDialer dials the addresses resolve chose, in order, and never looks
// a name up: the address judged is the address connected to. Control checks
// it once more right before connect, so that a refused address sees no
// packet whatever path led to it.
func pinnedDialer(p policy, timeout time.Duration) func(ctx context.Context, network, address string) (net.Conn, error) {
	dialer := &net.Dialer{
		Timeout: timeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !p.allowed(ap.Addr()) {
				return errEgressDenied
			}
			return nil
		},
	}
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		targets, _ := ctx.Value(targetKey{}).([]netip.AddrPort)
		err := errEgressDenied
		for _, target := range targets {
			var conn net.Conn
			if conn, err = dialer.DialContext(ctx, network, target.String()); err == nil || ctx.Err() != nil {
				return conn, err
			}
		}
		return nil, err
	}
}

// resolve finds where j may connect: the addresses its URL's host stands
// for that the egress policy allows, with the URL's port.
func (d *Dispatcher) resolve(ctx context.Context, j job) ([]netip.AddrPort, result) {
	u, err := url.Parse(j.hook.URL)
	if err != nil || u.Hostname() == "" {
		return nil, result{failure: reasonBadURL}
	}
	port, err := strconv.ParseUint(cmp.Or(u.Port(), map[string]string{"http": "80", "https": "443"}[u.Scheme]), 10, 16)
	if err != nil {
		return nil, result{failure: reasonBadURL}
	}
	addrs, err := d.policy.resolve(ctx, u.Hostname())
	if err != nil {
		return nil, failed(ctx, err)
	}
	target := make([]netip.AddrPort, len(addrs))
	for i, a := range addrs {
		target[i] = netip.AddrPortFrom(a, uint16(port))
	}
	return target, result{}
}

// attempt POSTs j's event to j's webhook once, as flight f, which the
// outbox knows as sent once the request is written.
func (d *Dispatcher) attempt(ctx context.Context, o *Outbox, j job, f *flight) result {
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			o.markSent(f)
		}
	}}
	ctx = httptrace.WithClientTrace(context.WithValue(ctx, targetKey{}, j.target), trace)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.hook.URL, bytes.NewReader(j.event.JSON))
	if err != nil {
		return result{failure: reasonBadURL}
	}
	timestamp, secret := j.at.Unix(), j.hook.Secret
	if j.fault != nil {
		switch j.fault.Webhook {
		case sandbox.WebhookStaleTimestamp:
			timestamp -= int64(sandbox.StaleTimestampAge / time.Second)
		case sandbox.WebhookBadSignature:
			// A key the receiver does not have: the signature has the
			// right form and does not verify.
			secret = "forged:" + secret
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "svc-sandbox-webhooks/1")
	req.Header.Set("Webhook-Id", MessageID(o.accountID, j.event.ID))
	req.Header.Set("Webhook-Timestamp", strconv.FormatInt(timestamp, 10))
	req.Header.Set("Webhook-Signature", Signature(secret, timestamp, j.event.JSON))
	// A receiver under test checks Webhook-Timestamp against the account's
	// clock, which may be frozen far from its own.
	req.Header.Set(NowHeader, strconv.FormatInt(j.at.Unix(), 10))
	res, err := d.client.Do(req)
	if err != nil {
		return failed(ctx, err)
	}
	defer res.Body.Close()
	// Drain a little so the connection can be reused, but never read an
	// endless body.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode >= 200 && res.StatusCode <= 299:
		return result{status: res.StatusCode}
	case res.StatusCode >= 300 && res.StatusCode <= 399:
		return result{status: res.StatusCode, retry: true,
			failure: fmt.Sprintf("receiver answered %d; redirects are not followed", res.StatusCode)}
	}
	return result{status: res.StatusCode, retry: true, failure: fmt.Sprintf("receiver answered %d", res.StatusCode)}
}

// failed is the result of an attempt that got no answer; retrying helps
// unless the policy or the URL is the reason.
func failed(ctx context.Context, err error) result {
	reason := failureReason(err)
	if errors.Is(context.Cause(ctx), errAttemptTimeout) {
		reason = reasonTimeout
	}
	return result{failure: reason, retry: reason != reasonEgress && reason != reasonBadURL}
}

// failureReason says in general terms why a request got no answer.
func failureReason(err error) string {
	var (
		netErr     net.Error
		dnsErr     *net.DNSError
		certErr    *tls.CertificateVerificationError
		headerErr  tls.RecordHeaderError
		alertErr   tls.AlertError
		unknownCA  x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
	)
	switch {
	case errors.Is(err, errEgressDenied):
		return reasonEgress
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return reasonTimeout
	case errors.As(err, &dnsErr):
		return reasonDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return reasonRefused
	case errors.As(err, &certErr), errors.As(err, &headerErr), errors.As(err, &alertErr),
		errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalidErr):
		return reasonTLS
	}
	return reasonFailed
}

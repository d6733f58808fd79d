package webhook

import (
	"bytes"
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
	"strconv"
	"syscall"
	"time"
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
// 32 hex digits of the SHA-256 of the account ID, a zero byte and the event
// ID. Event IDs repeat across accounts, since every account numbers its own
// from evt_000001; the account ID, itself derived from the key, makes the
// Webhook-Id unique across accounts while every retry of one event, and every
// webhook it goes to, carries the same one, so receivers can de-duplicate on
// it. An account that is reset numbers its events afresh, and so repeats its
// Webhook-Ids unless accountID changes with the reset.
func MessageID(accountID, eventID string) string {
	h := sha256.New()
	h.Write([]byte(accountID))
	h.Write([]byte{0})
	h.Write([]byte(eventID))
	return "msg_" + hex.EncodeToString(h.Sum(nil)[:16])
}

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

// newClient returns the client of every delivery: no proxy (the egress policy
// must see the receiver's address, not a proxy's), the policy in the dialer,
// and redirects returned rather than followed, so that a receiver cannot send
// a delivery somewhere its URL does not say.
func newClient(opts Options) *http.Client {
	transport := &http.Transport{
		DialContext:            newDialer(opts.AttemptTimeout, opts.DenyPrivate, opts.LoopbackOnly).DialContext,
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

// attempt POSTs j's event to j's webhook once.
func (d *Dispatcher) attempt(o *Outbox, j job) result {
	ctx, cancel := context.WithTimeout(o.ctx, d.opts.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.hook.URL, bytes.NewReader(j.event.JSON))
	if err != nil {
		return result{failure: reasonBadURL}
	}
	// Checked before the client looks the name up: a loopback-only sandbox
	// sends not even a DNS query anywhere else.
	if d.opts.LoopbackOnly && !loopbackHost(req.URL.Hostname()) {
		return result{failure: reasonEgress}
	}
	timestamp := o.clock.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "svc-sandbox-webhooks/1")
	req.Header.Set("Webhook-Id", MessageID(o.accountID, j.event.ID))
	req.Header.Set("Webhook-Timestamp", strconv.FormatInt(timestamp, 10))
	req.Header.Set("Webhook-Signature", Signature(j.hook.Secret, timestamp, j.event.JSON))
	res, err := d.client.Do(req)
	if err != nil {
		reason := failureReason(err)
		return result{failure: reason, retry: reason != reasonEgress && reason != reasonBadURL}
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

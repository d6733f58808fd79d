package sandboxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/testcampaign/kit/openapi/client"
)

// Controls is a client of one key's sandbox controls, as docs/controls.md
// describes them: the faults planned for its account, the journal of the
// requests its client sent, its clock, its webhook deliveries, and a reset.
// Each method sends one request through the client generated from the
// OpenAPI document, and returns an error answer as a *ControlError.
//
// It works against any sandbox: one a test starts, or a shared one.
type Controls struct {
	api *client.Client
}

// NewControls returns the controls of apiKey's account on the sandbox at
// baseURL, sent with http.DefaultClient until WithHTTPClient says otherwise.
func NewControls(baseURL, apiKey string) *Controls {
	return &Controls{api: &client.Client{
		Server: strings.TrimSuffix(baseURL, "/") + "/",
		Client: http.DefaultClient,
		RequestEditors: []client.RequestEditorFn{func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+apiKey)
			return nil
		}},
	}}
}

// WithHTTPClient returns controls of the same account that send through hc:
// for a sandbox served over TLS, a client that trusts its certificate.
func (c *Controls) WithHTTPClient(hc *http.Client) *Controls {
	api := *c.api
	api.Client = hc
	return &Controls{api: &api}
}

// ControlError is a control's error answer: the envelope's status, code and
// message, and with VALIDATION_ERROR the fields at fault.
type ControlError struct {
	Status  int
	Code    client.ErrorCode
	Message string
	Details []client.FieldError
}

func (e *ControlError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// RequestFilter picks requests of the journal, as its method and path
// parameters do; a zero field picks every request. Path takes a trailing *,
// as a fault's path does: "/v1/bugs*".
type RequestFilter struct {
	Method string
	Path   string
}

// Page asks for one page of a list: at most Limit items (0 for the list's
// default), after the page whose NextCursor Cursor is.
type Page struct {
	Limit  int
	Cursor string
}

// ClockReading is what an account's clock reads.
type ClockReading struct {
	Now time.Time
	// Frozen says whether the clock stands still until the account moves it.
	Frozen bool
}

// Settlement is how an account's webhook deliveries stand.
type Settlement struct {
	// Settled is true when no delivery is in flight, queued or due.
	Settled bool
	// InFlight, Queued and Due count the deliveries that kept it from
	// settling.
	InFlight, Queued, Due int
	// Scheduled counts the retries, and the deliveries a webhook fault's
	// delay holds, still waiting for their time, which settling does not
	// wait for.
	Scheduled int
	// Held counts the deliveries a reorder webhook fault holds back until
	// the next event to their webhook, which settling does not wait for
	// either.
	Held int
}

// PlanFault plans a fault after those already planned, and returns it as
// the sandbox planned it, its ID included: answers it changes carry that
// ID in X-Sandbox-Fault.
func (c *Controls) PlanFault(ctx context.Context, fault client.FaultPlanCreate) (client.Fault, error) {
	planned, err := answer[client.FaultEnvelope](c.api.PlanFaults(ctx, fault))
	return planned.Data, err
}

// Faults returns the faults still planned, oldest first, each with the
// requests it has hit and how many it will still hit.
func (c *Controls) Faults(ctx context.Context) ([]client.Fault, error) {
	page, err := answer[client.FaultPageEnvelope](c.api.ListFaults(ctx))
	return page.Data.Items, err
}

// ClearFaults drops every planned fault and returns how many there were.
func (c *Controls) ClearFaults(ctx context.Context) (int, error) {
	cleared, err := answer[client.ClearedEnvelope](c.api.ClearFaults(ctx))
	return cleared.Data.Cleared, err
}

// Requests returns one page of the journal's requests that match filter,
// newest first: what the client sent, the status it got, and the fault
// that hit it.
func (c *Controls) Requests(ctx context.Context, filter RequestFilter, page Page) (client.RequestLogPage, error) {
	params := journalParams(filter)
	if page.Limit != 0 {
		params.Limit = &page.Limit
	}
	if page.Cursor != "" {
		params.Cursor = &page.Cursor
	}
	logged, err := answer[client.RequestLogPageEnvelope](c.api.ListRequests(ctx, params))
	return logged.Data, err
}

// CountRequests returns how many of the journal's requests match filter:
// "the client sent exactly two POSTs".
func (c *Controls) CountRequests(ctx context.Context, filter RequestFilter) (int, error) {
	params := journalParams(filter)
	params.Count = new(true)
	counted, err := answer[client.RequestCountEnvelope](c.api.ListRequests(ctx, params))
	return counted.Data.Count, err
}

func journalParams(filter RequestFilter) *client.ListRequestsParams {
	params := &client.ListRequestsParams{}
	if filter.Method != "" {
		params.Method = new(client.FaultMethod(filter.Method))
	}
	if filter.Path != "" {
		params.Path = &filter.Path
	}
	return params
}

// Clock reads the account's clock.
func (c *Controls) Clock(ctx context.Context) (ClockReading, error) {
	read, err := answer[client.ClockReadingEnvelope](c.api.ReadClock(ctx))
	return ClockReading{Now: read.Data.Now, Frozen: read.Data.Frozen}, err
}

// AdvanceClock moves the account's frozen clock forward by d, making the
// rate-limit windows and webhook retries it passes due, and returns the
// time it then reads. A sandbox whose clocks run answers 409 CONFLICT.
func (c *Controls) AdvanceClock(ctx context.Context, d time.Duration) (time.Time, error) {
	moved, err := answer[client.ClockEnvelope](c.api.MoveClock(ctx, client.ClockMove{Advance: d.String()}))
	return moved.Data.Now, err
}

// Reset replaces the account with a freshly seeded one: records, IDs,
// clock, rate-limit counts, faults, journal and pending deliveries.
func (c *Controls) Reset(ctx context.Context) error {
	_, err := answer[client.ResetEnvelope](c.api.ResetAccount(ctx))
	return err
}

// Deliveries returns one page of the account's webhook delivery attempts,
// newest first.
func (c *Controls) Deliveries(ctx context.Context, page Page) (client.DeliveryPage, error) {
	params := &client.ListDeliveriesParams{}
	if page.Limit != 0 {
		params.Limit = &page.Limit
	}
	if page.Cursor != "" {
		params.Cursor = &page.Cursor
	}
	delivered, err := answer[client.DeliveryPageEnvelope](c.api.ListDeliveries(ctx, params))
	return delivered.Data, err
}

// Settle waits until no delivery of the account is in flight, queued or
// due, or until timeout has passed (0 for the sandbox's 5 s), and returns
// how the deliveries stand: a test waits on it instead of polling.
func (c *Controls) Settle(ctx context.Context, timeout time.Duration) (Settlement, error) {
	var body client.SettleDeliveriesJSONRequestBody
	if timeout > 0 {
		// Rounded up, so that a timeout under a millisecond still waits.
		body.TimeoutMs = new(int((timeout + time.Millisecond - 1) / time.Millisecond))
	}
	settled, err := answer[client.SettlementEnvelope](c.api.SettleDeliveries(ctx, body))
	d := settled.Data
	return Settlement{Settled: d.Settled, InFlight: d.InFlight, Queued: d.Queued, Due: d.Due, Scheduled: d.Scheduled, Held: d.Held}, err
}

// maxAnswer bounds what is read of one answer: the largest, a journal page,
// holds at most 64 KiB of requests.
const maxAnswer = 4 << 20

// answer decodes a control's answer: its envelope when it succeeded, a
// *ControlError when it is an error envelope, and an error saying what came
// otherwise.
func answer[Envelope any](res *http.Response, err error) (Envelope, error) {
	var decoded Envelope
	if err != nil {
		return decoded, err
	}
	defer res.Body.Close()
	op := res.Request.Method + " " + res.Request.URL.Path
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return decoded, fmt.Errorf("%s: read the answer: %w", op, err)
	}
	if res.StatusCode != http.StatusOK {
		var failed client.ErrorEnvelope
		if json.Unmarshal(body, &failed) != nil || failed.Error.Code == "" {
			return decoded, fmt.Errorf("%s answered %d with no error envelope: %.200q", op, res.StatusCode, body)
		}
		e := failed.Error
		controlErr := &ControlError{Status: res.StatusCode, Code: e.Code, Message: e.Message}
		if e.Details != nil {
			controlErr.Details = *e.Details
		}
		return decoded, controlErr
	}
	if err := json.Unmarshal(body, &decoded); err != nil {
		return decoded, fmt.Errorf("%s: decode the answer: %w", op, err)
	}
	return decoded, nil
}

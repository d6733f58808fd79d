package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// testKey is a valid test key long enough for its hint to show a tail.
const testKey = "svc_test_0123456789abcdef"

// envelope is the response body as a client decodes it.
type envelope struct {
	Success *bool           `json:"success"`
	Data    json.RawMessage `json:"data"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Status  int    `json:"status"`
		Details []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"details"`
	} `json:"error"`
}

type response struct {
	status int
	header http.Header
	raw    []byte
	env    envelope
}

// client sends requests to an in-process sandbox with one key.
type client struct {
	t       *testing.T
	handler http.Handler
	key     string
}

func newClient(t *testing.T, opts sandboxtest.Options) *client {
	t.Helper()
	return &client{t: t, handler: sandboxtest.NewHandler(t, opts), key: testKey}
}

func (c *client) withKey(key string) *client {
	return &client{t: c.t, handler: c.handler, key: key}
}

// do sends a request; a non-empty body is sent as JSON. Extra headers come as
// name, value pairs and replace the defaults.
func (c *client) do(method, path, body string, headers ...string) response {
	c.t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, reader)
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	rec := httptest.NewRecorder()
	c.handler.ServeHTTP(rec, req)
	res := response{status: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		c.t.Fatalf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	dec := json.NewDecoder(bytes.NewReader(res.raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res.env); err != nil || res.env.Success == nil {
		c.t.Fatalf("%s %s: body is not an envelope (%v): %s", method, path, err, res.raw)
	}
	if *res.env.Success != (res.env.Error == nil) || *res.env.Success == (res.env.Data == nil) {
		c.t.Fatalf("%s %s: envelope mixes success and error: %s", method, path, res.raw)
	}
	if res.env.Error != nil && res.env.Error.Status != res.status {
		c.t.Fatalf("%s %s: error.status %d but HTTP status %d", method, path, res.env.Error.Status, res.status)
	}
	return res
}

// ok sends a request that must succeed and decodes its data into out.
func (c *client) ok(method, path, body string, out any) {
	c.t.Helper()
	res := c.do(method, path, body)
	if res.status != http.StatusOK {
		c.t.Fatalf("%s %s: status %d, want 200: %s", method, path, res.status, res.raw)
	}
	if out != nil {
		if err := json.Unmarshal(res.env.Data, out); err != nil {
			c.t.Fatalf("%s %s: decode data: %v", method, path, err)
		}
	}
}

// fails sends a request that must fail with the given status and code.
func (c *client) fails(method, path, body string, status int, code string, headers ...string) response {
	c.t.Helper()
	res := c.do(method, path, body, headers...)
	if res.status != status || res.env.Error == nil || res.env.Error.Code != code {
		c.t.Fatalf("%s %s: got %d %s, want %d %s", method, path, res.status, res.raw, status, code)
	}
	return res
}

type campaign struct {
	ID              string          `json:"id"`
	Name            string          `json:"name"`
	Platform        string          `json:"platform"`
	TestersRequired int             `json:"testersRequired"`
	RewardPerBug    json.RawMessage `json:"rewardPerBug"`
	Status          string          `json:"status"`
	CreatedAt       string          `json:"createdAt"`
}

type bug struct {
	ID         string  `json:"id"`
	CampaignID string  `json:"campaignId"`
	TesterID   string  `json:"testerId"`
	Severity   string  `json:"severity"`
	Status     string  `json:"status"`
	Resolution *string `json:"resolution"`
	UpdatedAt  string  `json:"updatedAt"`
}

type page[T any] struct {
	Items      []T     `json:"items"`
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
}

const validCampaign = `{"name":"Checkout","platform":"ios","testersRequired":10,"rewardPerBug":19.99}`

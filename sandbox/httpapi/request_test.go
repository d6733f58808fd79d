package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/testcampaign/kit/sandbox"
)

// campaignBody is a campaign create named name, padded with an unknown field
// to at least size bytes.
func campaignBody(name string, size int) string {
	head := `{"name":"` + name + `","platform":"web","testersRequired":1,"rewardPerBug":1,"padding":"`
	return head + strings.Repeat("x", max(0, size-len(head)-2)) + `"}`
}

func campaignRequest(ctx context.Context, body string) *http.Request {
	r := httptest.NewRequestWithContext(ctx, "POST", "/v1/campaigns", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestLargeBodiesWaitForASlotAndSmallOnesDoNot(t *testing.T) {
	var held []*bytes.Buffer
	for range cap(largeBodies) {
		held = append(held, <-largeBodies)
	}
	small, err := parseBody(campaignRequest(t.Context(), campaignBody("small", 0)), sandbox.ParseCampaignInput)
	if err != nil || small.Name != "small" {
		t.Fatalf("a small body while every slot is taken: %+v, %v", small, err)
	}
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = parseBody(campaignRequest(gone, campaignBody("large", largeBodyBytes)), sandbox.ParseCampaignInput)
	if sandbox.AsError(err).Code != sandbox.ErrRequestTimeout {
		t.Fatalf("a large body whose client left while every slot was taken: %v, want REQUEST_TIMEOUT", err)
	}
	for _, buf := range held {
		largeBodies <- buf
	}

	// A slot's buffer serves the next large body; what the first one
	// decoded to is its own.
	first, err := parseBody(campaignRequest(t.Context(), campaignBody("first", MaxBodyBytes-10)), sandbox.ParseCampaignInput)
	if err != nil {
		t.Fatal(err)
	}
	second, err := parseBody(campaignRequest(t.Context(), campaignBody("second", largeBodyBytes)), sandbox.ParseCampaignInput)
	if err != nil {
		t.Fatal(err)
	}
	if first.Name != "first" || second.Name != "second" {
		t.Errorf("names %q and %q, want first and second", first.Name, second.Name)
	}
	if len(largeBodies) != cap(largeBodies) {
		t.Errorf("%d of %d slots free after the bodies were decoded", len(largeBodies), cap(largeBodies))
	}
}

// countingReader counts what is read of the string it reads.
type countingReader struct {
	*strings.Reader
	read int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	c.read += n
	return n, err
}

// A body announced as large waits for its slot before any of it is read, so
// that a crowd of them waiting (300 delayed 1 MiB POSTs of one key) holds
// nothing but their connections; one of unknown length is read up to the
// bound first, as it must be to be told large.
func TestAnAnnouncedLargeBodyIsNotReadWhileItWaits(t *testing.T) {
	var held []*bytes.Buffer
	for range cap(largeBodies) {
		held = append(held, <-largeBodies)
	}
	t.Cleanup(func() {
		for _, buf := range held {
			largeBodies <- buf
		}
	})
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name          string
		contentLength int64
		wantRead      int
	}{
		{"announced", MaxBodyBytes, 0},
		{"of unknown length", -1, largeBodyBytes},
	} {
		body := &countingReader{Reader: strings.NewReader(campaignBody("large", MaxBodyBytes-10))}
		r := campaignRequest(gone, "")
		r.Body, r.ContentLength = io.NopCloser(body), tc.contentLength
		_, err := parseBody(r, sandbox.ParseCampaignInput)
		if sandbox.AsError(err).Code != sandbox.ErrRequestTimeout || body.read != tc.wantRead {
			t.Errorf("%s, its client gone while every slot was taken: %v after reading %d bytes; want REQUEST_TIMEOUT after %d", tc.name, err, body.read, tc.wantRead)
		}
	}
}

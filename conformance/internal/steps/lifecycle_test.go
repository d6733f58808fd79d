package steps

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/kit"
)

func TestStatusOfRanksTheKitsOwnTroubleAsAnError(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want kit.Status
	}{
		{nil, kit.Passed},
		{errors.New(`the header "Allow" is missing`), kit.Failed},
		{fmt.Errorf("step: %w", godog.ErrSkip), kit.Skipped},
		{fmt.Errorf("%w: I sned a request", godog.ErrUndefined), kit.Errored},
		{fmt.Errorf("%w: bad placeholder", kit.ErrUsage), kit.Errored},
		{fmt.Errorf("%w: GET /v1: refused", kit.ErrConnection), kit.Errored},
		{&transport.ThrottledError{Scope: transport.ScopeKey, Request: "GET /v1/bugs"}, kit.Errored},
	} {
		if got := statusOf(tt.err); got != tt.want {
			t.Errorf("statusOf(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

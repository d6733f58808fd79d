package sandbox_test

import (
	"testing"

	"github.com/testcampaign/kit/sandbox"
)

func TestPageRequest(t *testing.T) {
	next := sandbox.NewPage([]int{1}, true, 42)
	req, err := sandbox.ParsePageRequest("7", *next.NextCursor)
	if err != nil || req.Limit != 7 || req.Before != 42 {
		t.Errorf("round trip: %+v, %v", req, err)
	}
	if last := sandbox.NewPage[int](nil, false, 0); last.NextCursor != nil || last.Items == nil {
		t.Errorf("last page = %+v, want empty items and no cursor", last)
	}
	for _, bad := range [][2]string{{"0", ""}, {"101", ""}, {"-1", ""}, {"1.5", ""}, {"", "YzEuMA"}, {"", "!!"}, {"", "eDEuNDI"}} {
		if _, err := sandbox.ParsePageRequest(bad[0], bad[1]); sandbox.AsError(err).Code != sandbox.ErrInvalidParameter {
			t.Errorf("limit %q cursor %q: err = %v", bad[0], bad[1], err)
		}
	}
}

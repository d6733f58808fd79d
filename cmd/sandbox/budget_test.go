package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// budgetAnswer is the part of an answer the memory budget test reads.
type budgetAnswer struct {
	status int
	body   struct {
		Success bool `json:"success"`
		Data    struct {
			Items []struct {
				Name string `json:"name"`
			} `json:"items"`
		} `json:"data"`
		Error struct {
			Code   string `json:"code"`
			Status int    `json:"status"`
		} `json:"error"`
	}
}

func budgetAsk(t *testing.T, method, url, body string) budgetAnswer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer svc_test_budget_filler")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	got := budgetAnswer{status: res.StatusCode}
	if err := json.Unmarshal(raw, &got.body); err != nil {
		t.Fatalf("%s %s: not an envelope: %s", method, url, raw)
	}
	return got
}

func TestCreatePastTheMemoryBudgetGets409AndStoresNothing(t *testing.T) {
	cfg, err := parseFlags([]string{"-memory-budget", "4KiB"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	base, stop := startRun(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	accepted := 0
	var refused budgetAnswer
	for i := range 100 {
		got := budgetAsk(t, "POST", base+"/v1/campaigns", fmt.Sprintf(`{"name":"Budget %d","platform":"web","testersRequired":1,"rewardPerBug":1}`, i))
		if got.status != http.StatusOK {
			refused = got
			break
		}
		accepted++
	}
	if accepted == 0 || refused.status != http.StatusConflict || refused.body.Success ||
		refused.body.Error.Code != "LIMIT_REACHED" || refused.body.Error.Status != http.StatusConflict {
		t.Fatalf("after %d creates within a 4 KiB budget: %+v, want 409 LIMIT_REACHED in the envelope", accepted, refused)
	}
	listed := budgetAsk(t, "GET", base+"/v1/campaigns?limit=100", "")
	var names []string
	for _, c := range listed.body.Data.Items {
		if strings.HasPrefix(c.Name, "Budget ") {
			names = append(names, c.Name)
		}
	}
	if len(names) != accepted || slices.Contains(names, fmt.Sprintf("Budget %d", accepted)) {
		t.Errorf("campaigns held after the refusal: %q, want the %d accepted and not the refused one", names, accepted)
	}
	if events := budgetAsk(t, "GET", base+"/_sandbox/events?limit=100", ""); len(events.body.Data.Items) != accepted {
		t.Errorf("%d events after %d accepted creates and a refused one, want one each", len(events.body.Data.Items), accepted)
	}
}

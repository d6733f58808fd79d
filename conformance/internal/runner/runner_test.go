package runner

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

func TestReceiverProblem(t *testing.T) {
	tests := []struct {
		name string
		cfg  kit.Config
		want string
	}{
		{"local deployment, loopback receiver", kit.Config{BaseURL: "http://127.0.0.1:8080", WebhookListen: "127.0.0.1:0"}, ""},
		{"localhost deployment", kit.Config{BaseURL: "http://localhost:8080", WebhookListen: "127.0.0.1:0"}, ""},
		{"remote deployment, loopback receiver", kit.Config{BaseURL: "https://api.example.com", WebhookListen: "127.0.0.1:0"}, "cannot reach"},
		{"remote deployment through a tunnel", kit.Config{BaseURL: "https://api.example.com", WebhookListen: "127.0.0.1:9099", WebhookURL: "https://hooks.example.net"}, ""},
		{"every interface without a URL", kit.Config{BaseURL: "http://127.0.0.1:8080", WebhookListen: "0.0.0.0:9099"}, "every interface"},
		{"off", kit.Config{BaseURL: "http://127.0.0.1:8080", WebhookListen: "off"}, "off"},
	}
	for _, tt := range tests {
		got := receiverProblem(tt.cfg)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: receiverProblem = %q, want it to say %q", tt.name, got, tt.want)
		}
	}
}

// TestAnUnreadableSeedIsReported: when what a fresh account holds cannot be
// read, the model learns instead of holding records exactly, and every
// report says so instead of passing in silence.
func TestAnUnreadableSeedIsReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"success":false,"error":{"code":"INTERNAL_ERROR","message":"down","status":500}}`, http.StatusInternalServerError)
	}))
	defer srv.Close()
	cfg := kit.Config{BaseURL: srv.URL, APIKey: "svc_test_unreadable_seed", Profile: kit.ProfileSandbox}
	tgt := &transport.Target{BaseURL: srv.URL, Key: cfg.APIKey, Profile: cfg.Profile, Redact: wire.Redactor(cfg.APIKey), Client: srv.Client()}
	gaps := startModel(t.Context(), cfg, tgt).Gaps()
	if len(gaps) != 1 || !strings.Contains(gaps[0], "could not be read") || !strings.Contains(gaps[0], "answered 500") {
		t.Fatalf("gaps %q, want one saying the seed could not be read and why", gaps)
	}
	rep := &kit.Report{Unchecked: gaps}
	var summary, junit, html strings.Builder
	rep.WriteSummary(&summary)
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"summary": summary.String(), "junit": junit.String(), "HTML": html.String()} {
		if !strings.Contains(text, "answered 500") {
			t.Errorf("the %s does not say what was not checked:\n%s", name, text)
		}
	}
}

package runner

import (
	"strings"
	"testing"
)

func TestReceiverProblem(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"local deployment, loopback receiver", Config{BaseURL: "http://127.0.0.1:8080", WebhookListen: "127.0.0.1:0"}, ""},
		{"localhost deployment", Config{BaseURL: "http://localhost:8080", WebhookListen: "127.0.0.1:0"}, ""},
		{"remote deployment, loopback receiver", Config{BaseURL: "https://api.example.com", WebhookListen: "127.0.0.1:0"}, "cannot reach"},
		{"remote deployment through a tunnel", Config{BaseURL: "https://api.example.com", WebhookListen: "127.0.0.1:9099", WebhookURL: "https://hooks.example.net"}, ""},
		{"every interface without a URL", Config{BaseURL: "http://127.0.0.1:8080", WebhookListen: "0.0.0.0:9099"}, "every interface"},
		{"off", Config{BaseURL: "http://127.0.0.1:8080", WebhookListen: "off"}, "off"},
	}
	for _, tt := range tests {
		got := receiverProblem(tt.cfg)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: receiverProblem = %q, want it to say %q", tt.name, got, tt.want)
		}
	}
}

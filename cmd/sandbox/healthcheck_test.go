package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/testcampaign/kit/internal/version"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

func TestHealthURL(t *testing.T) {
	tests := []struct {
		addr, want string
	}{
		{"0.0.0.0:8080", "http://127.0.0.1:8080/healthz"},
		{":8080", "http://127.0.0.1:8080/healthz"},
		{"[::]:8080", "http://[::1]:8080/healthz"},
		{"127.0.0.1:9000", "http://127.0.0.1:9000/healthz"},
		{"[::1]:9000", "http://[::1]:9000/healthz"},
	}
	for _, tt := range tests {
		got, err := healthURL(tt.addr)
		if err != nil || got != tt.want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", tt.addr, got, err, tt.want)
		}
	}
	if _, err := healthURL("8080"); err == nil {
		t.Error("healthURL accepted an address without a port")
	}
}

func TestHealthcheck(t *testing.T) {
	healthy := strings.TrimPrefix(sandboxtest.NewServer(t, sandboxtest.Options{}).URL, "http://")
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := closed.Addr().String()
	closed.Close()

	tests := []struct {
		name string
		args []string
		want int
	}{
		{"a running sandbox", []string{"-addr", healthy}, 0},
		{"a running sandbox, asked as the container's 0.0.0.0", []string{"-addr", "0.0.0.0:" + port(t, healthy)}, 0},
		{"a server that is not healthy", []string{"-addr", strings.TrimPrefix(failing.URL, "http://")}, 1},
		{"nothing listening", []string{"-addr", nobody, "-timeout", "1s"}, 1},
		{"bad address", []string{"-addr", "nowhere"}, 2},
		{"unknown flag", []string{"-nope"}, 2},
		{"extra argument", []string{"now"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := healthcheck(tt.args, &stderr); got != tt.want {
				t.Errorf("healthcheck(%q) = %d, want %d; stderr: %s", tt.args, got, tt.want, stderr.String())
			}
		})
	}
}

func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSubcommand(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantRan    bool
		wantCode   int
		wantStdout string
	}{
		{"serve without arguments", nil, false, 0, ""},
		{"serve with flags", []string{"-addr", "127.0.0.1:0"}, false, 0, ""},
		{"--version", []string{"--version"}, true, 0, "sandbox " + version.Read().String() + "\n"},
		{"-version", []string{"-version"}, true, 0, "sandbox " + version.Read().String() + "\n"},
		{"healthcheck with bad arguments", []string{"healthcheck", "-nope"}, true, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			code, ran := subcommand(tt.args, &stdout, io.Discard)
			if ran != tt.wantRan || code != tt.wantCode || stdout.String() != tt.wantStdout {
				t.Errorf("subcommand(%q) = %d, %v, stdout %q; want %d, %v, %q", tt.args, code, ran, stdout.String(), tt.wantCode, tt.wantRan, tt.wantStdout)
			}
		})
	}
}

package steps

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// TestDropKindTellsTheNetworkFaultsApart drops connections the ways the
// sandbox's reset, close and truncate faults do, and wants the error the
// client meets named as that kind.
func TestDropKindTellsTheNetworkFaultsApart(t *testing.T) {
	tests := []struct {
		want string
		drop func(conn *net.TCPConn)
	}{
		{"reset", func(conn *net.TCPConn) {
			_ = conn.SetLinger(0)
			_ = conn.Close()
		}},
		{"closed", func(conn *net.TCPConn) { _ = conn.Close() }},
		{"cut in the body", func(conn *net.TCPConn) {
			_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"success\":")
			_ = conn.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				// The whole request is read first, as the sandbox reads it
				// for its journal before a fault drops the connection.
				if req, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
					_, _ = io.Copy(io.Discard, req.Body)
				}
				tt.drop(conn.(*net.TCPConn))
			}()
			resp, err := http.Post("http://"+ln.Addr().String()+"/v1/campaigns", "application/json", strings.NewReader(`{"name":"x"}`))
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if err == nil {
				t.Fatal("the request was answered whole")
			}
			if !dropped(err) {
				t.Errorf("dropped(%v) = false", err)
			}
			if got := dropKind(err.Error()); got != tt.want {
				t.Errorf("dropKind(%q) = %q, want %q", err, got, tt.want)
			}
		})
	}
}

// A request the client gave up on ended without an answer, but no fault of
// the deployment dropped it: the steps that check a planned drop must not
// take one for the other.
func TestAGivenUpRequestIsNoDrop(t *testing.T) {
	gaveUp := &wire.Exchange{Method: "GET", URL: "http://127.0.0.1/v1/testers", NoAnswer: "context deadline exceeded", GaveUp: true}
	s := newScenarioState(&transport.Target{Key: "svc_test_dropcheck", Redact: func(s string) string { return s }}, nil)
	sent(s, gaveUp)
	if err := s.droppedWithoutAnswer(context.Background()); err == nil {
		t.Error("a request the client gave up on passed as dropped without an answer")
	}
	for _, how := range []string{"reset", "closed", "cut in the body"} {
		if err := s.droppedAs(context.Background(), how); err == nil {
			t.Errorf("a request the client gave up on passed as %s", how)
		}
	}
}

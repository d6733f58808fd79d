package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every network fault as a client of the binary sees it: through the
// connection limiter that wraps each connection, not only a bare handler.
func TestNetworkFaultsReachTheClientThroughTheBinary(t *testing.T) {
	base, stop := startRun(t, config{maxConns: 64})
	defer stop()
	addr := strings.TrimPrefix(base, "http://")
	const key = "svc_test_network_faults_binary"

	plan := func(t *testing.T, fault string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/_sandbox/faults", strings.NewReader(fault))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("plan %s: %d", fault, res.StatusCode)
		}
	}
	// send writes one request on a connection of its own and returns the
	// connection to read the answer from.
	send := func(t *testing.T) net.Conn {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "GET /v1/campaigns HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", addr, key)
		return conn
	}

	droppedAnswers(t, plan, send)
	t.Run("malformed", func(t *testing.T) {
		plan(t, `{"network":"malformed"}`)
		res, err := http.ReadResponse(bufio.NewReader(send(t)), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK || json.Valid(body) || res.Header.Get("X-Sandbox-Fault") == "" {
			t.Errorf("got %d %q (%v), fault %q; want 200, a body that is not JSON, and the fault named",
				res.StatusCode, body, err, res.Header.Get("X-Sandbox-Fault"))
		}
	})
	t.Run("trickle", func(t *testing.T) {
		plan(t, `{"network":"trickle","trickleMs":200}`)
		res, err := http.ReadResponse(bufio.NewReader(send(t)), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK || !json.Valid(body) || res.Header.Get("X-Sandbox-Fault") == "" {
			t.Errorf("got %d, %d bytes (%v), fault %q; want the whole answer, slowly", res.StatusCode, len(body), err, res.Header.Get("X-Sandbox-Fault"))
		}
	})
}

// droppedAnswers checks the faults that drop an answer, each on a request
// that send writes on a connection of its own after plan has planned it:
// a reset, an orderly close, and a body cut short of its length.
func droppedAnswers[C net.Conn](t *testing.T, plan func(t *testing.T, fault string), send func(t *testing.T) C) {
	t.Run("reset", func(t *testing.T) {
		plan(t, `{"network":"reset"}`)
		n, err := io.ReadAll(send(t))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("read %d bytes, then %v; want a connection reset", len(n), err)
		}
	})
	t.Run("close", func(t *testing.T) {
		plan(t, `{"network":"close"}`)
		got, err := io.ReadAll(send(t))
		if err != nil || len(got) != 0 {
			t.Errorf("read %q, then %v; want an orderly close with nothing sent", got, err)
		}
	})
	t.Run("truncate", func(t *testing.T) {
		plan(t, `{"network":"truncate"}`)
		res, err := http.ReadResponse(bufio.NewReader(send(t)), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) || res.ContentLength <= int64(len(body)) {
			t.Errorf("read %d of the %d bytes promised, then %v; want fewer and an unexpected EOF", len(body), res.ContentLength, err)
		}
	})
}

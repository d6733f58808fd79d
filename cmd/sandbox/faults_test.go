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

	"github.com/testcampaign/kit/openapi/client"
	"github.com/testcampaign/kit/sandbox/sandboxtest"
)

// Every network fault as a client of the binary sees it: through the
// connection limiter that wraps each connection, not only a bare handler.
func TestNetworkFaultsReachTheClientThroughTheBinary(t *testing.T) {
	base, stop := startRun(t, config{maxConns: 64})
	defer stop()
	addr := strings.TrimPrefix(base, "http://")
	const key = "svc_test_network_faults_binary"

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

	networkFaults(t, sandboxtest.NewControls(base, key), send)
}

// networkFaults checks every network fault, each on a request that send
// writes on a connection of its own, under the key of controls, after
// controls has planned the fault.
func networkFaults(t *testing.T, controls *sandboxtest.Controls, send func(t *testing.T) net.Conn) {
	plan := func(t *testing.T, fault client.FaultPlanCreate) {
		t.Helper()
		if _, err := controls.PlanFault(t.Context(), fault); err != nil {
			t.Fatalf("plan %s: %v", *fault.Network, err)
		}
	}
	t.Run("reset", func(t *testing.T) {
		plan(t, client.FaultPlanCreate{Network: new(client.NetworkFaultReset)})
		n, err := io.ReadAll(send(t))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("read %d bytes, then %v; want a connection reset", len(n), err)
		}
	})
	t.Run("close", func(t *testing.T) {
		plan(t, client.FaultPlanCreate{Network: new(client.NetworkFaultClose)})
		got, err := io.ReadAll(send(t))
		if err != nil || len(got) != 0 {
			t.Errorf("read %q, then %v; want an orderly close with nothing sent", got, err)
		}
	})
	t.Run("truncate", func(t *testing.T) {
		plan(t, client.FaultPlanCreate{Network: new(client.NetworkFaultTruncate)})
		res, body, err := answerOn(t, send(t))
		if !errors.Is(err, io.ErrUnexpectedEOF) || res.ContentLength <= int64(len(body)) {
			t.Errorf("read %d of the %d bytes promised, then %v; want fewer and an unexpected EOF", len(body), res.ContentLength, err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		plan(t, client.FaultPlanCreate{Network: new(client.NetworkFaultMalformed)})
		res, body, err := answerOn(t, send(t))
		if err != nil || res.StatusCode != http.StatusOK || json.Valid(body) || res.Header.Get("X-Sandbox-Fault") == "" {
			t.Errorf("got %d %q (%v), fault %q; want 200, a body that is not JSON, and the fault named",
				res.StatusCode, body, err, res.Header.Get("X-Sandbox-Fault"))
		}
	})
	t.Run("trickle", func(t *testing.T) {
		plan(t, client.FaultPlanCreate{Network: new(client.NetworkFaultTrickle), TrickleMs: new(200)})
		res, body, err := answerOn(t, send(t))
		if err != nil || res.StatusCode != http.StatusOK || !json.Valid(body) || res.Header.Get("X-Sandbox-Fault") == "" {
			t.Errorf("got %d, %d bytes (%v), fault %q; want the whole answer, slowly", res.StatusCode, len(body), err, res.Header.Get("X-Sandbox-Fault"))
		}
	})
}

// answerOn reads the answer on conn: its head, which must come, and as
// much of its body as comes, with the error that ended the body.
func answerOn(t *testing.T, conn net.Conn) (*http.Response, []byte, error) {
	t.Helper()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	return res, body, err
}

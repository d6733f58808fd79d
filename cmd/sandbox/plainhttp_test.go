package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// httpsStack is a server assembled as run assembles it, with the listener
// stack and the HTTP server's bounds and hooks, serving HTTPS with a
// -tls-self-signed certificate and a handler that answers "ok".
type httpsStack struct {
	addr    string
	limiter *connLimiter
	// client trusts the stack's CA.
	client *http.Client
	// closed receives a value each time the server has closed a connection.
	closed chan struct{}
}

func startHTTPSStack(t testing.TB, headerTimeout time.Duration) httpsStack {
	t.Helper()
	return startHTTPSStackOver(t, headerTimeout, true)
}

// startHTTPSStackOver is startHTTPSStack with TLS straight over the
// limiter unless refusing, as before plain HTTP was refused, for
// benchmarks to compare.
func startHTTPSStackOver(t testing.TB, headerTimeout time.Duration, refusing bool) httpsStack {
	t.Helper()
	dir := t.TempDir()
	cfg := config{addr: "127.0.0.1:0", tlsSelfSigned: dir, maxConns: 16, idleTimeout: time.Minute, headerTimeout: headerTimeout}
	tcp, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		t.Fatal(err)
	}
	tlsConf, err := cfg.tlsConfig(tcp.Addr())
	if err != nil {
		tcp.Close()
		t.Fatal(err)
	}
	served, limiter := cfg.listenerStack(tcp, tlsConf)
	if !refusing {
		served = tls.NewListener(limiter, tlsConf)
	}
	srv := cfg.httpServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), limiter, slog.New(slog.DiscardHandler))
	closed := make(chan struct{}, 16)
	limiterHook := srv.ConnState
	srv.ConnState = func(c net.Conn, state http.ConnState) {
		limiterHook(c, state)
		if state == http.StateClosed {
			select {
			case closed <- struct{}{}:
			default: // a benchmark's connections, which nobody waits for
			}
		}
	}
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Serve(served) }()
	t.Cleanup(func() {
		srv.Close()
		<-stopped
	})
	return httpsStack{addr: tcp.Addr().String(), limiter: limiter, client: trusting(t, filepath.Join(dir, caFile)), closed: closed}
}

// checkReleased waits for the server to close one connection, and then
// holds the limiter's count to none open.
func (s httpsStack) checkReleased(t *testing.T) {
	t.Helper()
	<-s.closed
	if open := s.limiter.Open(); open != 0 {
		t.Errorf("the limiter counts %d connections open after the last one closed, want 0", open)
	}
}

// checkHTTPSRequired sends a plain HTTP request to an HTTPS port and holds
// the answer to a 400 HTTPS_REQUIRED envelope that names httpsBase, after
// which the server closes the connection. (WEB-9)
func checkHTTPSRequired(t *testing.T, client *http.Client, method, url string, body []byte, httpsBase string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer svc_test_plain_http_client")
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	if res.StatusCode != http.StatusBadRequest || res.Proto != "HTTP/1.1" || res.Header.Get("Content-Type") != "application/json" || !res.Close {
		t.Errorf("%s %s: %s %s, Content-Type %q, Connection: close %v; want HTTP/1.1 400, application/json, close",
			method, url, res.Proto, res.Status, res.Header.Get("Content-Type"), res.Close)
	}
	if method == http.MethodHead {
		if len(raw) != 0 || res.ContentLength <= 0 {
			t.Errorf("HEAD: a body of %d bytes and Content-Length %d, want none and the GET's length", len(raw), res.ContentLength)
		}
		return
	}
	var envelope struct {
		Success *bool `json:"success"`
		Error   struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Status  int    `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &envelope); err != nil || envelope.Success == nil || *envelope.Success {
		t.Fatalf("%s %s: %q is not a failure envelope: %v", method, url, raw, err)
	}
	e := envelope.Error
	if e.Code != "HTTPS_REQUIRED" || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, httpsBase) {
		t.Errorf("%s %s: error %+v, want HTTPS_REQUIRED, status 400 and a message naming %s", method, url, e, httpsBase)
	}
}

// A client configured with http:// against a sandbox serving HTTPS learns
// what to change from an envelope, whatever it sends; the refused
// connection leaves the limiter's count, and TLS clients are served as
// before. (WEB-9)
func TestPlainHTTPToTheHTTPSPortGetsAnEnvelope(t *testing.T) {
	stack := startHTTPSStack(t, 0)
	plain := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	// More than any first read takes in: the refusal reads it all before
	// answering, or the close would reset the connection under the answer.
	bigBody := []byte(`{"name":"` + strings.Repeat("x", 256<<10) + `"}`)
	for _, c := range []struct {
		method, path string
		body         []byte
	}{
		{"GET", "/v1/campaigns", nil},
		{"POST", "/v1/campaigns", bigBody},
		{"PATCH", "/v1/bugs/bug_000001", []byte(`{"status":"confirmed"}`)},
		{"HEAD", "/healthz", nil},
		{"get", "/v1/campaigns", nil},
	} {
		t.Run(c.method, func(t *testing.T) {
			checkHTTPSRequired(t, plain, c.method, "http://"+stack.addr+c.path, c.body, "https://"+stack.addr)
			stack.checkReleased(t)
		})
	}
	t.Run("TLS", func(t *testing.T) {
		res, err := getWith(t, stack.client, "https://"+stack.addr+"/v1/campaigns", "")
		if err != nil || res.StatusCode != http.StatusOK || res.TLS == nil {
			t.Fatalf("a TLS client: %v, %v; want 200 over TLS", res, err)
		}
		stack.client.Transport.(*http.Transport).CloseIdleConnections()
		stack.checkReleased(t)
	})
}

// A connection that sends nothing is closed when the handshake's time is
// up, without a byte, as net/http does; one that starts a plain request
// and stalls is answered then. (WEB-9)
func TestSilentAndStalledConnectionsToTheHTTPSPortEnd(t *testing.T) {
	stack := startHTTPSStack(t, 200*time.Millisecond)
	dial := func(t *testing.T) net.Conn {
		t.Helper()
		conn, err := net.Dial("tcp", stack.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		// A guard against a hang, far beyond the server's timeout.
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		return conn
	}
	t.Run("silent", func(t *testing.T) {
		got, err := io.ReadAll(dial(t))
		if err != nil || len(got) != 0 {
			t.Errorf("read %q, %v; want the connection closed without an answer", got, err)
		}
		stack.checkReleased(t)
	})
	t.Run("stalled", func(t *testing.T) {
		conn := dial(t)
		fmt.Fprint(conn, "GET /v1/campa")
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("a stalled plain request: %s, Content-Type %q; want 400 in JSON", res.Status, res.Header.Get("Content-Type"))
		}
		stack.checkReleased(t)
	})
}

// BenchmarkHTTPS measures HTTPS served over the refusal of plain HTTP
// against TLS straight over the limiter: a new connection (handshake, one
// request, close) and a request on a kept-alive connection.
func BenchmarkHTTPS(b *testing.B) {
	for _, refusing := range []bool{false, true} {
		over := map[bool]string{false: "over=limiter", true: "over=refusal"}[refusing]
		stack := startHTTPSStackOver(b, 0, refusing)
		url := "https://" + stack.addr + "/v1/campaigns"
		clientConf := stack.client.Transport.(*http.Transport).TLSClientConfig
		b.Run(over+"/conn=new", func(b *testing.B) {
			for b.Loop() {
				conn, err := tls.Dial("tcp", stack.addr, clientConf)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprint(conn, "GET /v1/campaigns HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
				if _, err := io.Copy(io.Discard, conn); err != nil {
					b.Fatal(err)
				}
				conn.Close()
			}
		})
		b.Run(over+"/conn=kept", func(b *testing.B) {
			for b.Loop() {
				res, err := stack.client.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
}

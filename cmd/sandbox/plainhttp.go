package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/testcampaign/kit/sandbox"
	"github.com/testcampaign/kit/sandbox/httpapi"
)

// tlsHandshakeRecord is the first byte a TLS client sends: the record type
// of its ClientHello.
const tlsHandshakeRecord = 0x16

// errPlainHTTP ends the TLS handshake of a connection that brought plain
// HTTP and has had its answer; the server logs it as the handshake's error.
var errPlainHTTP = errors.New("client sent plain HTTP to the HTTPS port: answered 400 " + sandbox.ErrHTTPSRequired)

// plainHTTPRefuser is the listener TLS is served over. net/http answers
// plain HTTP on an HTTPS port with a plain-text HTTP/1.0 400 of its own, and
// only for a few methods; here every request a client sends in plain HTTP
// gets 400 HTTPS_REQUIRED in the envelope instead, with the URL to use
// (WEB-9).
type plainHTTPRefuser struct {
	net.Listener
	// timeout bounds the reading of a refused request and the writing of
	// its answer.
	timeout time.Duration
}

func (l plainHTTPRefuser) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &httpsConn{Conn: c, timeout: l.timeout}, nil
}

// httpsConn tells, by the first byte its TLS server reads, a TLS client
// from one that speaks plain HTTP. The first read is the handshake's own,
// into the handshake's buffer: a TLS connection reads nothing more, nor
// later, than without it.
type httpsConn struct {
	net.Conn
	timeout time.Duration
	// sorted is set once the first bytes have been looked at; only the
	// goroutine that reads the connection touches it.
	sorted bool
}

// NetConn returns the connection it wraps, so that the connection limiter
// and a reset fault find theirs beneath it.
func (c *httpsConn) NetConn() net.Conn {
	return c.Conn
}

func (c *httpsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.sorted || n == 0 {
		return n, err
	}
	c.sorted = true
	// A TLS record begins with its type, 20 to 24, and an HTTP request
	// with its method, in letters of either case (methods are
	// case-sensitive, and a client may send "get"): a letter cannot be TLS.
	if p[0] == tlsHandshakeRecord || !isLetter(p[0]) {
		return n, err
	}
	c.refuse(p[:n])
	return 0, errPlainHTTP
}

func isLetter(b byte) bool {
	return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z'
}

// refuse answers the plain HTTP request that began with first, and closes
// the connection. It reads the request first, its head and a body within
// the API's bound, because closing a connection with unread bytes resets
// it, and the client could lose the answer; a request that does not arrive
// within the timeout is answered as it stands.
func (c *httpsConn) refuse(first []byte) {
	defer c.Conn.Close()
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	in := bufio.NewReader(io.MultiReader(bytes.NewReader(first), io.LimitReader(c.Conn, httpapi.MaxHeaderBytes+httpapi.MaxBodyBytes)))
	req, err := http.ReadRequest(in)
	if err == nil {
		_, _ = io.Copy(io.Discard, req.Body)
	}
	msg := "the sandbox serves HTTPS on this port: use an https:// URL, not http://"
	if local, ok := c.Conn.LocalAddr().(*net.TCPAddr); ok {
		msg = "the sandbox serves HTTPS on this port: use https://" + local.String() + ", not http://" + local.String()
	}
	status, body := httpapi.ErrorEnvelope(sandbox.Errorf(sandbox.ErrHTTPSRequired, "%s", msg))
	answer := &http.Response{
		StatusCode: status, ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Close:         true,
		// The answer to a HEAD has no body.
		Request: req,
	}
	// The answer gets its time from now, after a read that may have used
	// up its own.
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
	_ = answer.Write(c.Conn)
}

package main

import (
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"

	"github.com/testcampaign/kit/sandbox/clientverdict"
)

// fdReserve is how many file descriptors are left below the process's limit
// for what is not an API connection: webhook deliveries, fixtures, logs.
func fdReserve(limit int) int {
	return max(128, limit/10)
}

// defaultMaxConns is the connection cap below the file-descriptor limit
// (which Go raises to the hard limit at start-up).
func defaultMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 10_000
	}
	limit := int(rl.Cur)
	return max(16, limit-fdReserve(limit))
}

// connLimiter caps the open connections of a server. At the cap, a new
// connection makes room by closing, oldest first, an idle keep-alive
// connection, else one that has not yet sent a whole request, else one whose
// request waits in an injected delay or trickle; only when every connection
// is busy with a request is the new one closed instead. So neither a crowd
// of idle clients nor a tenant's planned delays can lock out a new client,
// nor /healthz.
type connLimiter struct {
	net.Listener
	max int

	mu   sync.Mutex
	open int
	// idle and fresh hold, oldest first, the connections in
	// http.StateIdle and http.StateNew, and parked those waiting in a
	// fault. A connection moves between them twice a request: each is
	// linked through its connections, so that a move takes no allocation
	// and no map.
	idle, fresh, parked connQueue
}

func newConnLimiter(l net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: l, max: max}
}

// Accept returns the next connection, having made room for it.
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tracked := &trackedConn{Conn: c, limiter: l}
	l.mu.Lock()
	l.open++
	var victim net.Conn
	overCap := l.open > l.max
	if overCap {
		for _, waiting := range []*connQueue{&l.idle, &l.fresh, &l.parked} {
			if oldest := waiting.head; oldest != nil {
				oldest.unlink()
				victim = oldest
				break
			}
		}
	}
	l.mu.Unlock()
	if overCap && victim == nil {
		victim = tracked
	}
	if victim != nil {
		victim.Close()
	}
	return tracked, nil
}

// ConnState is the http.Server hook that tells the limiter which
// connections are idle.
func (l *connLimiter) ConnState(c net.Conn, state http.ConnState) {
	tracked := trackedOf(c)
	if tracked == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	tracked.unlink()
	switch state {
	case http.StateNew:
		l.fresh.push(tracked)
	case http.StateIdle:
		l.idle.push(tracked)
	}
}

// trackedOf returns the limiter's connection beneath c, which the server
// may have wrapped in TLS and the refusal of plain HTTP; nil if it has
// none.
func trackedOf(c net.Conn) *trackedConn {
	for {
		switch conn := c.(type) {
		case *trackedConn:
			return conn
		case interface{ NetConn() net.Conn }:
			c = conn.NetConn()
		default:
			return nil
		}
	}
}

// connQueue is a list of connections, oldest first, linked through them.
type connQueue struct {
	head, tail *trackedConn
}

// push appends c, which is in no queue.
func (q *connQueue) push(c *trackedConn) {
	c.queue, c.prev, c.next = q, q.tail, nil
	if q.tail != nil {
		q.tail.next = c
	} else {
		q.head = c
	}
	q.tail = c
}

// unlink takes c out of its queue, if it is in one; the limiter's lock is
// held.
func (c *trackedConn) unlink() {
	q := c.queue
	if q == nil {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		q.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		q.tail = c.prev
	}
	c.queue, c.prev, c.next = nil, nil, nil
}

// connKey is the context key under which ConnContext puts a request's
// connection.
type connKey struct{}

// ConnContext is the http.Server hook that lets Park find a request's
// connection, and the verdict on a client when it was opened.
func (l *connLimiter) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(clientverdict.ConnContext(ctx, c), connKey{}, c)
}

// Park marks the connection of the request whose context it gets as waiting
// in a fault, until resume is called.
func (l *connLimiter) Park(ctx context.Context) (resume func()) {
	c, _ := ctx.Value(connKey{}).(net.Conn)
	tracked := trackedOf(c)
	if tracked == nil {
		return func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	tracked.unlink()
	l.parked.push(tracked)
	// The wait ends before the handler returns, so before the connection
	// can be idle: what resume takes out is still its place in parked.
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		tracked.unlink()
	}
}

// Open is how many accepted connections are not yet closed.
func (l *connLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// trackedConn gives its descriptor back to the limiter's count when closed,
// by the server or by the limiter, whichever is first.
type trackedConn struct {
	net.Conn
	limiter *connLimiter
	once    sync.Once
	// queue is the limiter's queue the connection is in, nil if none, and
	// prev and next its neighbours there; the limiter's lock guards them.
	queue      *connQueue
	prev, next *trackedConn
}

// NetConn returns the connection it wraps, as crypto/tls's Conn does, so
// that a reset fault reaches the TCP connection beneath to set its linger.
func (c *trackedConn) NetConn() net.Conn {
	return c.Conn
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.limiter.mu.Lock()
		defer c.limiter.mu.Unlock()
		c.limiter.open--
		c.unlink()
	})
	return err
}

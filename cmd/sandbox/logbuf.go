package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// Log buffering: one write to standard error per request line cost 5–10%
// of the sandbox's CPU under load. Lines are buffered instead and written
// out when the buffer fills, on every tick of logFlushInterval, and at exit,
// so a line reaches the log at most that late and none is lost when the
// sandbox stops.
const (
	logBufferBytes   = 64 << 10
	logFlushInterval = 100 * time.Millisecond
)

// bufferedLog is a log output that its writers share.
type bufferedLog struct {
	mu  sync.Mutex
	buf *bufio.Writer
	// closed makes every later write go straight out.
	closed bool
	// stop ends the flushing goroutine; stopped is closed once it has
	// written the last lines out.
	stop, stopped chan struct{}
	closeOnce     sync.Once
}

// newBufferedLog buffers writes to out and writes them out on every tick
// until Close. slog handlers write a whole line per Write call, so lines
// never interleave.
func newBufferedLog(out io.Writer, ticks <-chan time.Time) *bufferedLog {
	l := &bufferedLog{buf: bufio.NewWriterSize(out, logBufferBytes), stop: make(chan struct{}), stopped: make(chan struct{})}
	go l.flushOn(ticks)
	return l
}

func (l *bufferedLog) flushOn(ticks <-chan time.Time) {
	defer close(l.stopped)
	for {
		select {
		case <-ticks:
			_ = l.Flush()
		case <-l.stop:
			_ = l.Flush()
			return
		}
	}
}

func (l *bufferedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	if err == nil && l.closed {
		err = l.buf.Flush()
	}
	return n, err
}

// Flush writes out every buffered line now.
func (l *bufferedLog) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Flush()
}

// Close writes out what is buffered and stops the ticks' flushing; a line
// that a goroutine still logs after it is written out at once.
func (l *bufferedLog) Close() error {
	l.closeOnce.Do(func() { close(l.stop) })
	<-l.stopped
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.buf.Flush()
}

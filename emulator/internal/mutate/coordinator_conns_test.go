package mutate

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"
)

// The coordinator holds at most maxConns connections open: with the bound taken by
// idle connections, a request on one more is not answered (the connection waits in
// the kernel's queue) until one of them closes.
func TestCoordinatorBoundsItsConnections(t *testing.T) {
	defer func(n int) { maxConns = n }(maxConns)
	maxConns = 2
	c, err := NewCoordinator()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ln.Addr().String()
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	idle := []net.Conn{dial(), dial()} // the kernel queues in order: these two are accepted first
	third := dial()
	if _, err := third.Write([]byte("POST /r/none/world HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(third)
	// absence can only be shown over a while; a slow machine makes this pass, never fail
	third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("a connection past the bound was served while the bound's connections were open")
	}
	idle[0].Close()
	third.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("once a connection closed, the waiting one was not served: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("an unknown round: %d, want 404", res.StatusCode)
	}
}

//go:build unix

package service

import (
	"net"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// reservePort returns the address of a free port of 127.0.0.1 that a
// socket holds bound without listening: a dial there is refused, and no
// listener of another test that asks for any port gets it, until release
// closes the socket (once).
func reservePort(t *testing.T) (addr string, release func()) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	release = sync.OnceFunc(func() { syscall.Close(fd) })
	t.Cleanup(release)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port)), release
}

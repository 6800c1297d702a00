package servicebench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// child is a `streamer run` process with an HTTP port of its own. It owns
// one goroutine, which waits for the process and closes exited; stop and
// kill return only once it has, and every harness stops its children on
// each of its return paths.
type child struct {
	cmd    *exec.Cmd
	port   int
	exited chan struct{} // closed once the process has exited and err is set
	err    error
	// grace is how long stop waits after SIGTERM before it kills the
	// process; startChild sets a minute.
	grace time.Duration
}

// startChild starts `exe run` with each of sets as a --set and an HTTP
// listener on a free local port, then the extra arguments.
func startChild(exe string, sets []string, extra ...string) (*child, error) {
	port, err := freeLocalPort()
	if err != nil {
		return nil, err
	}
	args := []string{"run", "--set", "http.listen=127.0.0.1:" + strconv.Itoa(port)}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(exe, append(args, extra...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %v: %w", sets, err)
	}
	c := &child{cmd: cmd, port: port, exited: make(chan struct{}), grace: time.Minute}
	go func() { c.err = cmd.Wait(); close(c.exited) }()
	return c, nil
}

// url is the address of path on the child's HTTP listener.
func (c *child) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", c.port, path)
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// hasExited reports whether the process has exited.
func (c *child) hasExited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// waitReady polls /readyz until it answers 200.
func (c *child) waitReady(ctx context.Context, timeout time.Duration) error {
	url := c.url("/readyz")
	return pollUntil(ctx, timeout, func() bool {
		if c.hasExited() {
			return false
		}
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, "ready")
}

// kill kills the process and waits for its exit.
func (c *child) kill() {
	c.cmd.Process.Kill()
	<-c.exited
}

// stop sends SIGTERM and waits, and returns how the process exited; it
// kills the process after c.grace. A process that had already exited is
// not signalled.
func (c *child) stop() error {
	if c.hasExited() {
		return c.err
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		return c.err
	case <-time.After(c.grace):
		c.kill()
		return fmt.Errorf("no exit within %v of SIGTERM; killed", c.grace)
	}
}

// freeLocalPort returns a TCP port of the loopback address that was free
// a moment ago.
func freeLocalPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

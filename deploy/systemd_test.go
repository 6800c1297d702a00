package deploy

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"streamer/config"
)

// unit is a systemd unit file: the values of each key, by section.
type unit map[string]map[string][]string

// readUnit reads a unit file simply: sections, key=value lines and
// comments; it continues no line.
func readUnit(file string) (unit, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
		case section == "":
			return nil, fmt.Errorf("%s:%d: %q is outside a section", file, n, line)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return nil, fmt.Errorf("%s:%d: %q: want key=value", file, n, line)
			}
			k = strings.TrimSpace(k)
			u[section][k] = append(u[section][k], strings.TrimSpace(v))
		}
	}
	return u, sc.Err()
}

// value returns the value of key in section that is in force: the last.
func (u unit) value(section, key string) string {
	vs := u[section][key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// TestSystemdUnit: the unit runs `streamer run --config <file>` as a user
// other than root, and gives it longer than shutdown.timeout to stop.
func TestSystemdUnit(t *testing.T) {
	const file = "systemd/streamer.service"
	u, err := readUnit(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Unit", "Service", "Install"} {
		if u[s] == nil {
			t.Errorf("%s: no [%s] section", file, s)
		}
	}
	if err := checkExecStart(u.value("Service", "ExecStart")); err != nil {
		t.Errorf("%s: ExecStart: %v", file, err)
	}
	if err := checkUser(u); err != nil {
		t.Errorf("%s: %v", file, err)
	}
	if err := checkStopTimeout(u.value("Service", "TimeoutStopSec")); err != nil {
		t.Errorf("%s: TimeoutStopSec: %v", file, err)
	}
}

// checkExecStart: the binary is streamer, given run and an absolute
// --config path, and not started with full privileges (+ or !).
func checkExecStart(exec string) error {
	fields := strings.Fields(exec)
	if len(fields) < 2 {
		return fmt.Errorf("%q: want streamer run --config <file>", exec)
	}
	bin := strings.TrimLeft(fields[0], "-@:")
	if strings.ContainsAny(strings.TrimSuffix(fields[0], bin), "+!") {
		return fmt.Errorf("%q: the + or ! prefix runs it with privileges", exec)
	}
	if !path.IsAbs(bin) || path.Base(bin) != "streamer" || fields[1] != "run" {
		return fmt.Errorf("%q: want /absolute/path/streamer run", exec)
	}
	i := slices.Index(fields, "--config")
	if i < 0 || i+1 == len(fields) || !path.IsAbs(fields[i+1]) {
		return fmt.Errorf("%q: want --config with an absolute path", exec)
	}
	return nil
}

// checkUser: User= names a user other than root, or DynamicUser=yes
// allocates one; with neither, the service runs as root.
func checkUser(u unit) error {
	user := u.value("Service", "User")
	switch {
	case user == "root" || user == "0":
		return fmt.Errorf("User=%s: want a user other than root", user)
	case user == "" && !isTrue(u.value("Service", "DynamicUser")):
		return fmt.Errorf("no User= and no DynamicUser=yes: the service would run as root")
	}
	return nil
}

func isTrue(s string) bool {
	return slices.Contains([]string{"yes", "true", "on", "1"}, strings.ToLower(s))
}

// checkStopTimeout: systemd's SIGKILL comes after the default
// shutdown.timeout, so that the drain, the commit and the last snapshot
// finish.
func checkStopTimeout(s string) error {
	var stop time.Duration
	switch n, err := time.ParseDuration(s + "s"); {
	case s == "":
		stop = 90 * time.Second // systemd's DefaultTimeoutStopSec
	case err == nil:
		stop = n
	default:
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q: %w", s, err)
		}
		stop = d
	}
	var cfg config.Config
	err := withEnvironment(nil, func() error {
		var err error
		cfg, err = config.Load("", nil)
		return err
	})
	if err != nil {
		return err
	}
	if stop <= cfg.Shutdown.Timeout {
		return fmt.Errorf("%s is not longer than the default shutdown.timeout, %s", stop, cfg.Shutdown.Timeout)
	}
	return nil
}

package deploy

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path"
	"strings"
	"testing"

	"streamer/config"
)

// containerfile is what the tests read of the Containerfile: the
// arguments of each instruction, by instruction.
type containerfile map[string][]string

// readContainerfile reads the instructions of the Containerfile, one a
// line (it continues none).
func readContainerfile() (containerfile, error) {
	data, err := os.ReadFile("Containerfile")
	if err != nil {
		return nil, err
	}
	cf := containerfile{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, args, _ := strings.Cut(line, " ")
		cf[strings.ToUpper(instr)] = append(cf[strings.ToUpper(instr)], strings.TrimSpace(args))
	}
	return cf, nil
}

// last returns the arguments of the last instruction instr, which is the
// one in force.
func (cf containerfile) last(instr string) string {
	args := cf[instr]
	if len(args) == 0 {
		return ""
	}
	return args[len(args)-1]
}

// execForm decodes the JSON array of an ENTRYPOINT or CMD.
func (cf containerfile) execForm(instr string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(cf.last(instr)), &out); err != nil {
		return nil, fmt.Errorf("Containerfile: %s %s: want the exec form, a JSON array: %w", instr, cf.last(instr), err)
	}
	return out, nil
}

// TestImage: the image runs streamer as a user other than root, with a
// configuration that config.Load loads and that listens on the port the
// image exposes.
func TestImage(t *testing.T) {
	cf, err := readContainerfile()
	if err != nil {
		t.Fatal(err)
	}
	user, _, _ := strings.Cut(cf.last("USER"), ":")
	if user == "" || user == "0" || user == "root" {
		t.Errorf("Containerfile: USER %q: want a user other than root", cf.last("USER"))
	}
	entry, err := cf.execForm("ENTRYPOINT")
	if err != nil {
		t.Fatal(err)
	}
	if len(entry) != 1 || path.Base(entry[0]) != "streamer" {
		t.Errorf("Containerfile: ENTRYPOINT %q: want the streamer binary alone, so that a pod's args are its subcommand", entry)
	}
	cmd, err := cf.execForm("CMD")
	if err != nil {
		t.Fatal(err)
	}
	if len(cmd) != 3 || cmd[0] != "run" || cmd[1] != "--config" || !copies(cf, "streamer.yaml", cmd[2]) {
		t.Errorf("Containerfile: CMD %q: want run --config with the file COPY puts streamer.yaml at", cmd)
	}
	checkImageConfiguration(t, cf)
}

// copies reports whether a COPY of the Containerfile puts src at dst.
func copies(cf containerfile, src, dst string) bool {
	for _, args := range cf["COPY"] {
		if f := strings.Fields(args); len(f) == 2 && f[0] == src && f[1] == dst {
			return true
		}
	}
	return false
}

// checkImageConfiguration: streamer.yaml, which make image puts in the
// image, loads with the image's variables and listens, on every interface,
// on the port the image exposes.
func checkImageConfiguration(t *testing.T, cf containerfile) {
	env, err := imageEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	var cfg config.Config
	err = withEnvironment(env, func() error {
		cfg, err = config.Load("streamer.yaml", nil)
		return err
	})
	if err != nil {
		t.Fatalf("streamer.yaml, the image's configuration: %v", err)
	}
	host, port, err := net.SplitHostPort(cfg.HTTP.Listen)
	if err != nil || (host != "" && host != "0.0.0.0" && host != "::") {
		t.Errorf("streamer.yaml: http.listen %q: want every interface, which the probes and Prometheus reach", cfg.HTTP.Listen)
	}
	if expose := cf.last("EXPOSE"); port != strings.TrimSuffix(expose, "/tcp") {
		t.Errorf("streamer.yaml: http.listen %q is not on the port the Containerfile EXPOSEs, %s", cfg.HTTP.Listen, expose)
	}
}

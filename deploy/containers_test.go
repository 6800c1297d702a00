package deploy

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"streamer/config"
)

// A container is one container of a workload, with the configuration it
// loads and the file that configuration came from.
type container struct {
	w    workload
	c    corev1.Container
	file string
	env  map[string]string
	cfg  config.Config
}

func (c container) String() string { return fmt.Sprintf("%s container %s", c.w.doc, c.c.Name) }

// loadContainers loads the configuration of every container of b's
// workloads, writing the configuration files under dir.
func loadContainers(b bundle, dir string) ([]container, []error) {
	var out []container
	var errs []error
	for _, w := range workloads(b) {
		for _, c := range w.pod.Spec.Containers {
			ct := container{w: w, c: c}
			file := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.yaml", filepath.Base(b.dir), w.doc.name, c.Name))
			var err error
			ct.file, ct.env, ct.cfg, err = loadConfig(b, w, c, file)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", ct, err))
				continue
			}
			out = append(out, ct)
		}
	}
	return out, errs
}

// loadConfig loads the configuration container c of w runs with: the file
// its --config names, from the ConfigMap mounted there, written to file;
// the image's and the container's STREAMER_* variables; its --set flags.
func loadConfig(b bundle, w workload, c corev1.Container, file string) (string, map[string]string, config.Config, error) {
	inv, err := parseRun(c)
	if err != nil {
		return "", nil, config.Config{}, err
	}
	content, err := mountedFile(b, w, c, inv.configPath)
	if err != nil {
		return "", nil, config.Config{}, err
	}
	env, err := environment(b, c)
	if err != nil {
		return "", nil, config.Config{}, err
	}
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		return "", nil, config.Config{}, err
	}
	var cfg config.Config
	err = withEnvironment(env, func() error {
		var err error
		cfg, err = config.Load(file, inv.sets)
		return err
	})
	if err != nil {
		return "", nil, config.Config{}, fmt.Errorf("config.Load of %s with %s: %w", inv.configPath, envNames(env), err)
	}
	return content, env, cfg, nil
}

// invocation is what a container's arguments ask of streamer run.
type invocation struct {
	configPath string
	sets       []string
}

// parseRun reads `run --config path [--set key=value]…` from the
// container's arguments; its command must be the image's entry point.
func parseRun(c corev1.Container) (invocation, error) {
	var inv invocation
	if len(c.Command) > 0 {
		return inv, fmt.Errorf("command %q replaces the image's entry point; give the subcommand in args", c.Command)
	}
	if len(c.Args) == 0 || c.Args[0] != "run" {
		return inv, fmt.Errorf("args %q: want run --config <file>", c.Args)
	}
	for i := 1; i < len(c.Args); i++ {
		name, value, inline := strings.Cut(c.Args[i], "=")
		if !inline && i+1 < len(c.Args) {
			i++
			value = c.Args[i]
		}
		switch name {
		case "--config":
			inv.configPath = value
		case "--set":
			inv.sets = append(inv.sets, value)
		default:
			return inv, fmt.Errorf("args: %s is not a flag this test knows of streamer run", name)
		}
	}
	if inv.configPath == "" {
		return inv, fmt.Errorf("args %q: no --config, so the container would run on the image's configuration", c.Args)
	}
	return inv, nil
}

// mountedFile returns the content of file in c's file system, from the
// ConfigMap volume mounted over it.
func mountedFile(b bundle, w workload, c corev1.Container, file string) (string, error) {
	for _, m := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/")
		if m.SubPath != "" {
			rel, ok = m.SubPath, file == m.MountPath
		}
		if !ok {
			continue
		}
		v := volume(w, m.Name)
		if v == nil || v.ConfigMap == nil {
			return "", fmt.Errorf("--config %s: volume %q mounted at %s is not a ConfigMap", file, m.Name, m.MountPath)
		}
		key := rel
		for _, it := range v.ConfigMap.Items {
			if it.Path == rel {
				key = it.Key
			}
		}
		data, ok := dataOf(b, "ConfigMap", v.ConfigMap.Name)
		if !ok {
			return "", fmt.Errorf("--config %s: ConfigMap %q is not in %s", file, v.ConfigMap.Name, b.dir)
		}
		content, ok := data[key]
		if !ok {
			return "", fmt.Errorf("--config %s: ConfigMap %q has no key %q", file, v.ConfigMap.Name, key)
		}
		return content, nil
	}
	return "", fmt.Errorf("--config %s: no volume is mounted there", file)
}

func volume(w workload, name string) *corev1.Volume {
	for i, v := range w.pod.Spec.Volumes {
		if v.Name == name {
			return &w.pod.Spec.Volumes[i]
		}
	}
	return nil
}

// environment returns the STREAMER_* variables c runs with: the image's
// (ENV of the Containerfile), overridden by its envFrom, then its env.
// A value from a ConfigMap or Secret is the one in b.
func environment(b bundle, c corev1.Container) (map[string]string, error) {
	env, err := imageEnvironment()
	if err != nil {
		return nil, err
	}
	for _, from := range c.EnvFrom {
		var data map[string]string
		switch {
		case from.ConfigMapRef != nil:
			data, _ = dataOf(b, "ConfigMap", from.ConfigMapRef.Name)
		case from.SecretRef != nil:
			data, _ = dataOf(b, "Secret", from.SecretRef.Name)
		}
		for k, v := range data {
			env[from.Prefix+k] = v
		}
	}
	for _, e := range c.Env {
		v, err := envValue(b, e)
		if err != nil {
			return nil, err
		}
		env[e.Name] = v
	}
	for k := range env {
		if !strings.HasPrefix(k, config.EnvPrefix+"_") {
			delete(env, k)
		}
	}
	return env, nil
}

// envValue returns the value variable e takes in a pod of b.
func envValue(b bundle, e corev1.EnvVar) (string, error) {
	r := e.ValueFrom
	switch {
	case r == nil:
		return e.Value, nil
	case r.ConfigMapKeyRef != nil:
		data, _ := dataOf(b, "ConfigMap", r.ConfigMapKeyRef.Name)
		return refValue(e.Name, "ConfigMap", r.ConfigMapKeyRef.Name, r.ConfigMapKeyRef.Key, data)
	case r.SecretKeyRef != nil:
		data, _ := dataOf(b, "Secret", r.SecretKeyRef.Name)
		return refValue(e.Name, "Secret", r.SecretKeyRef.Name, r.SecretKeyRef.Key, data)
	}
	return "from-the-downward-api", nil
}

func refValue(name, kind, object, key string, data map[string]string) (string, error) {
	v, ok := data[key]
	if !ok {
		return "", fmt.Errorf("env %s: %s %q has no key %q", name, kind, object, key)
	}
	return v, nil
}

// imageEnvironment returns the variables the Containerfile's ENV sets.
func imageEnvironment() (map[string]string, error) {
	data, err := os.ReadFile("Containerfile")
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "ENV" {
			continue
		}
		for _, kv := range fields[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("Containerfile: %q: want ENV key=value", line)
			}
			env[k] = v
		}
	}
	return env, nil
}

// withEnvironment runs f with the STREAMER_* variables of env and no
// other, as the container would, and restores the process's afterwards.
func withEnvironment(env map[string]string, f func() error) error {
	saved := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, config.EnvPrefix+"_") {
			saved[k] = v
			os.Unsetenv(k)
		}
	}
	defer func() {
		for k := range env {
			os.Unsetenv(k)
		}
		for k, v := range saved {
			os.Setenv(k, v)
		}
	}()
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return f()
}

func envNames(env map[string]string) string {
	if len(env) == 0 {
		return "no STREAMER_* variable"
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// checkConfigurations: every container's configuration loads, and names
// a cluster of brokers.
func checkConfigurations(t *testing.T, b bundle) {
	for _, err := range b.configErrs {
		t.Error(err)
	}
	for _, c := range b.containers {
		if err := c.cfg.CheckBrokers(false); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
}

// checkContainers runs the checks of every container whose configuration
// loaded.
func checkContainers(t *testing.T, b bundle) {
	image, err := builtImage()
	if err != nil {
		t.Fatal(err)
	}
	checks := []func(container) error{
		func(c container) error { return checkImage(c, image) },
		checkProbes,
		checkScrape,
		checkSecurity,
		checkResources,
		checkShutdown,
		checkSecret,
		checkShadowed,
		func(c container) error { return checkRole(b, c) },
	}
	for _, c := range b.containers {
		for _, check := range checks {
			if err := check(c); err != nil {
				t.Errorf("%s: %v", c, err)
			}
		}
	}
}

// builtImage returns the image `make image` tags by default (IMAGE in
// ../Makefile).
func builtImage() (string, error) {
	data, err := os.ReadFile("../Makefile")
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`(?m)^IMAGE\s*\?=\s*(\S+)`).FindSubmatch(data)
	if m == nil {
		return "", errors.New("../Makefile: no IMAGE ?= line")
	}
	return string(m[1]), nil
}

// checkImage: the container runs the image `make image` builds, in the
// manifests' registry if any: the repository's last path element is the
// same.
func checkImage(c container, image string) error {
	if repository(c.c.Image) != repository(image) {
		return fmt.Errorf("image %q is not the %q that make image builds", c.c.Image, image)
	}
	return nil
}

// repository returns the last path element of an image reference,
// without tag or digest.
func repository(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	ref = path.Base(ref)
	ref, _, _ = strings.Cut(ref, ":")
	return ref
}

// listenPort returns the port of http.listen, refusing an address that a
// probe from outside the container cannot reach.
func listenPort(c container) (int32, error) {
	host, port, err := net.SplitHostPort(c.cfg.HTTP.Listen)
	if err != nil {
		return 0, fmt.Errorf("http.listen %q: %w", c.cfg.HTTP.Listen, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return 0, fmt.Errorf("http.listen %q is a loopback address: the kubelet's probes and Prometheus cannot reach it", c.cfg.HTTP.Listen)
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("http.listen %q: port: %w", c.cfg.HTTP.Listen, err)
	}
	return int32(n), nil
}

// containerPort resolves a probe's or a Service's port, by name or
// number, to a port of the container.
func containerPort(c corev1.Container, p intstr.IntOrString) (int32, error) {
	for _, cp := range c.Ports {
		if p.Type == intstr.String && cp.Name == p.StrVal || p.Type == intstr.Int && cp.ContainerPort == p.IntVal {
			return cp.ContainerPort, nil
		}
	}
	return 0, fmt.Errorf("port %s is not a port of container %s", p.String(), c.Name)
}

// checkProbes: liveness on /livez and readiness on /readyz, on the port
// of http.listen.
func checkProbes(c container) error {
	port, err := listenPort(c)
	if err != nil {
		return err
	}
	probes := []struct {
		field, path string
		probe       *corev1.Probe
	}{
		{"livenessProbe", "/livez", c.c.LivenessProbe},
		{"readinessProbe", "/readyz", c.c.ReadinessProbe},
	}
	for _, p := range probes {
		if p.probe == nil || p.probe.HTTPGet == nil {
			return fmt.Errorf("%s: want an httpGet of %s", p.field, p.path)
		}
		if p.probe.HTTPGet.Path != p.path {
			return fmt.Errorf("%s.httpGet.path is %q, want %s", p.field, p.probe.HTTPGet.Path, p.path)
		}
		got, err := containerPort(c.c, p.probe.HTTPGet.Port)
		if err != nil {
			return fmt.Errorf("%s.httpGet: %w", p.field, err)
		}
		if got != port {
			return fmt.Errorf("%s.httpGet.port is %d, and http.listen is %s", p.field, got, c.cfg.HTTP.Listen)
		}
	}
	return nil
}

// checkScrape: Prometheus is asked to scrape /metrics on http.listen's
// port.
func checkScrape(c container) error {
	port, err := listenPort(c)
	if err != nil {
		return err
	}
	a := c.w.pod.Annotations
	want := map[string]string{
		"prometheus.io/scrape": "true",
		"prometheus.io/port":   strconv.Itoa(int(port)),
		"prometheus.io/path":   "/metrics",
	}
	for k, v := range want {
		if a[k] != v {
			return fmt.Errorf("spec.template.metadata.annotations[%s] is %q, want %q (http.listen is %s)", k, a[k], v, c.cfg.HTTP.Listen)
		}
	}
	return nil
}

// checkSecurity: not root, no privilege escalation, a read-only root file
// system.
func checkSecurity(c container) error {
	pod := c.w.pod.Spec.SecurityContext
	sc := c.c.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	if sc == nil {
		return errors.New("no securityContext")
	}
	nonRoot := sc.RunAsNonRoot != nil && *sc.RunAsNonRoot || sc.RunAsNonRoot == nil && pod.RunAsNonRoot != nil && *pod.RunAsNonRoot
	user := sc.RunAsUser
	if user == nil {
		user = pod.RunAsUser
	}
	switch {
	case !nonRoot:
		return errors.New("runAsNonRoot is not true in the pod's or the container's securityContext")
	case user != nil && *user == 0:
		return errors.New("runAsUser is 0, root")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		return errors.New("securityContext.readOnlyRootFilesystem is not true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		return errors.New("securityContext.allowPrivilegeEscalation is not false")
	case c.cfg.Snapshot.File != "" && !writable(c, c.cfg.Snapshot.File):
		return fmt.Errorf("snapshot.file %s is on the read-only root file system: mount a writable volume there", c.cfg.Snapshot.File)
	}
	return nil
}

// writable reports whether file is on a volume mounted read-write.
func writable(c container, file string) bool {
	for _, m := range c.c.VolumeMounts {
		if !m.ReadOnly && strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/") {
			return true
		}
	}
	return false
}

// checkResources: CPU and memory requests, so that the scheduler places
// the pod where it fits, and a memory limit.
func checkResources(c container) error {
	r := c.c.Resources
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := r.Requests[name]; !ok || q.IsZero() {
			return fmt.Errorf("resources.requests.%s is not set", name)
		}
	}
	if q, ok := r.Limits[corev1.ResourceMemory]; !ok || q.Cmp(r.Requests[corev1.ResourceMemory]) < 0 {
		return errors.New("resources.limits.memory is not set, or below the request")
	}
	return nil
}

// checkShutdown: the pod's grace period outlasts shutdown.timeout, so
// that SIGTERM's drain, commit and last snapshot are not cut by SIGKILL.
func checkShutdown(c container) error {
	grace := int64(30) // Kubernetes' default
	if g := c.w.pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	if float64(grace) <= c.cfg.Shutdown.Timeout.Seconds() {
		return fmt.Errorf("terminationGracePeriodSeconds %d is not longer than shutdown.timeout %s", grace, c.cfg.Shutdown.Timeout)
	}
	return nil
}

// passwordVariable is the environment variable of kafka.sasl.password.
const passwordVariable = config.EnvPrefix + "_KAFKA_SASL_PASSWORD"

// checkSecret: with SASL, the password comes from a Secret, and not from
// the ConfigMap or a literal in the manifest.
func checkSecret(c container) error {
	if c.cfg.Kafka.SASL.Mechanism == "" {
		return nil
	}
	var tree map[string]any
	if err := yaml.Unmarshal([]byte(c.file), &tree); err != nil {
		return err
	}
	if lookup(tree, "kafka", "sasl", "password") != nil {
		return errors.New("the ConfigMap's configuration sets kafka.sasl.password: put it in the Secret")
	}
	for _, e := range c.c.Env {
		if e.Name == passwordVariable && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			return fmt.Errorf("env %s is not from a secretKeyRef", passwordVariable)
		}
		if e.Name == passwordVariable {
			return nil
		}
	}
	return fmt.Errorf("kafka.sasl.mechanism is %s and no env %s gives the password", c.cfg.Kafka.SASL.Mechanism, passwordVariable)
}

// checkRole: a process of role all is alone (a second would learn the
// same stream twice, and a rolling update would start one); learners are
// an active and at least one standby.
func checkRole(b bundle, c container) error {
	switch c.cfg.Role {
	case config.RoleAll:
		if c.w.replicas != 1 {
			return fmt.Errorf("role all with spec.replicas %d, want 1", c.w.replicas)
		}
		if d, ok := c.w.doc.obj.(*appsv1.Deployment); ok && d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			return fmt.Errorf("role all with spec.strategy.type %q, want Recreate", d.Spec.Strategy.Type)
		}
	case config.RoleLearner:
		if c.w.replicas < 2 {
			return fmt.Errorf("role learner with spec.replicas %d: want 2 or more, an active and a standby", c.w.replicas)
		}
		if hpa := autoscalerOf(b, c.w); hpa != "" {
			return fmt.Errorf("role learner scaled by HorizontalPodAutoscaler %s: only one learner learns", hpa)
		}
	}
	return nil
}

// checkShadowed: no STREAMER_* variable, of the image or of the
// container, sets a key that the configuration file sets too: the
// variable wins, and an edit of the ConfigMap would do nothing.
func checkShadowed(c container) error {
	var tree map[string]any
	if err := yaml.Unmarshal([]byte(c.file), &tree); err != nil {
		return err
	}
	var shadowed []string
	for _, key := range leafKeys(tree, "") {
		if name := envVariable(key); c.env[name] != "" {
			shadowed = append(shadowed, fmt.Sprintf("%s by %s", key, name))
		}
	}
	if len(shadowed) > 0 {
		slices.Sort(shadowed)
		return fmt.Errorf("the ConfigMap's configuration sets keys that a variable of the Containerfile's ENV or of the container's env "+
			"overrides, so an edit of the ConfigMap would do nothing: %s", strings.Join(shadowed, ", "))
	}
	return nil
}

// leafKeys returns the dotted keys of the values of a YAML tree.
func leafKeys(tree map[string]any, prefix string) []string {
	var out []string
	for k, v := range tree {
		if sub, ok := v.(map[string]any); ok {
			out = append(out, leafKeys(sub, prefix+k+".")...)
			continue
		}
		out = append(out, prefix+k)
	}
	return out
}

// envVariable returns the environment variable of a configuration key, as
// config.Load reads it.
func envVariable(key string) string {
	return config.EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

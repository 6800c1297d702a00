package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"streamer/configs"
)

// EnvPrefix prefixes the environment variables that override keys.
const EnvPrefix = "STREAMER"

// Load reads the defaults (configs/streamer.yaml), then the file at
// path when it is not empty, then STREAMER_* environment variables, then
// the key=value overrides, and validates the result. Unknown keys and bad
// values are errors that name the key.
func Load(path string, overrides []string) (Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(configs.Default())); err != nil {
		return Config{}, fmt.Errorf("default configuration: %w", err)
	}
	known := map[string]bool{}
	for _, k := range v.AllKeys() {
		known[k] = true
	}
	if path != "" {
		if err := mergeFile(v, path, known); err != nil {
			return Config{}, err
		}
	}
	if err := checkEnvironment(os.Environ(), known); err != nil {
		return Config{}, err
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	for _, o := range overrides {
		key, value, ok := strings.Cut(o, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if !ok || !known[key] {
			return Config{}, fmt.Errorf("--set %q: want key=value with a key of configs/streamer.yaml", o)
		}
		v.Set(key, value)
	}
	var c Config
	if err := v.UnmarshalExact(&c); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// envNotKeys are STREAMER_* variables that are not configuration keys.
var envNotKeys = map[string]bool{
	"STREAMER_CRASH_EXAMPLES": true, // the size of service's crash test
	"STREAMER_SCALE_RATE":     true, // the rate of service's scale-out test
}

// checkEnvironment refuses a STREAMER_* variable that is the variable of
// no key: a typo would otherwise be ignored silently, where --set and the
// file refuse it.
func checkEnvironment(environ []string, known map[string]bool) error {
	names := map[string]bool{}
	for k := range known {
		names[EnvPrefix+"_"+strings.ToUpper(strings.ReplaceAll(k, ".", "_"))] = true
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix+"_") && !names[name] && !envNotKeys[name] {
			return fmt.Errorf("environment variable %s is the variable of no key of configs/streamer.yaml", name)
		}
	}
	return nil
}

func mergeFile(v *viper.Viper, path string, known map[string]bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read configuration: %w", err)
	}
	if err := yaml.Unmarshal(data, new(any)); err != nil {
		return fmt.Errorf("configuration %s: %w", path, yamlSyntaxError(data, err))
	}
	file := viper.New()
	file.SetConfigFile(path)
	if err := file.ReadInConfig(); err != nil {
		return fmt.Errorf("read configuration %s: %w", path, err)
	}
	for _, k := range file.AllKeys() {
		if !known[k] {
			return fmt.Errorf("configuration %s: unknown key %s", path, k)
		}
	}
	v.SetConfigFile(path)
	if err := v.MergeInConfig(); err != nil {
		return fmt.Errorf("read configuration %s: %w", path, err)
	}
	return nil
}

// yamlSyntaxError restates err with the line where data stops being YAML.
// The YAML parser reports a parse error at the line where its context
// began, counted from 0 (a flow list left open on line 2 is "line 1"):
// the first line after which no longer prefix of the file parses is where
// the text went wrong.
func yamlSyntaxError(data []byte, err error) error {
	lines := bytes.SplitAfter(data, []byte("\n"))
	bad := 0
	for n := len(lines); n > 0; n-- {
		if yaml.Unmarshal(bytes.Join(lines[:n], nil), new(any)) == nil {
			break
		}
		bad = n
	}
	msg := yamlLine.ReplaceAllString(err.Error(), "")
	if bad == 0 {
		return errors.New(msg)
	}
	return fmt.Errorf("line %d: %s", bad, strings.TrimPrefix(msg, "yaml: "))
}

var yamlLine = regexp.MustCompile(`line \d+: `)

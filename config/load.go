package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"streamer/configs"
)

// EnvPrefix prefixes the environment variables that override keys.
const EnvPrefix = "STREAMER"

// Load reads the defaults (configs/streamer.yaml), then the file at
// path when it is not empty, then STREAMER_* environment variables, then
// the key=value overrides, and validates the result. Unknown keys and bad
// values are errors that name the key and where it was set: the --set
// flag, the environment variable or the file.
func Load(path string, overrides []string) (Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(configs.Default())); err != nil {
		return Config{}, fmt.Errorf("default configuration: %w", err)
	}
	src := sources{
		known: map[string]bool{}, set: map[string]string{}, env: map[string]string{}, file: map[string]string{},
		values: map[string]string{}, fileNumbers: map[string]bool{},
	}
	for _, k := range v.AllKeys() {
		src.known[k] = true
	}
	if path != "" {
		if err := mergeFile(v, path, &src); err != nil {
			return Config{}, err
		}
	}
	if err := src.readEnvironment(os.Environ()); err != nil {
		return Config{}, err
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	for _, o := range overrides {
		key, value, err := src.override(o)
		if err != nil {
			return Config{}, err
		}
		v.Set(key, value)
	}
	if err := src.checkDurations(); err != nil {
		return Config{}, err
	}
	var c Config
	if err := v.UnmarshalExact(&c); err != nil {
		return Config{}, src.decodeError(err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, src.attribute(err)
	}
	return c, nil
}

// sources says where each key that is not at its default was set, so that
// an error names what the user wrote.
type sources struct {
	known map[string]bool
	set   map[string]string // key -> "--set key=value", the last one
	env   map[string]string // key -> "STREAMER_KEY=value"
	file  map[string]string // key -> "configuration path"
	// values are the raw values by the same keys, of the source that won.
	values map[string]string
	// fileNumbers are the keys the file gives a number.
	fileNumbers map[string]bool
}

// of returns where key was set, as the source that won says it, or "".
func (s *sources) of(key string) string {
	for _, m := range []map[string]string{s.set, s.env, s.file} {
		if w, ok := m[key]; ok {
			return w
		}
	}
	return ""
}

// override parses a --set flag.
func (s *sources) override(o string) (key, value string, err error) {
	key, value, ok := strings.Cut(o, "=")
	key = strings.ToLower(strings.TrimSpace(key))
	switch {
	case !ok:
		return "", "", fmt.Errorf("--set %s: want key=value, with a key of configs/streamer.yaml", o)
	case !s.known[key]:
		return "", "", fmt.Errorf("--set %s: no key %s in configs/streamer.yaml%s", o, key, didYouMean(key, s.keys()))
	}
	s.set[key] = "--set " + key + "=" + shown(key, value)
	s.setValue(key, value)
	return key, value, nil
}

func (s *sources) setValue(key, value string) { s.values[key] = value }

// shown is value as an error may show it: never a password.
func shown(key, value string) string {
	if strings.HasSuffix(key, "password") {
		return "…"
	}
	return value
}

func (s *sources) keys() []string {
	out := make([]string, 0, len(s.known))
	for k := range s.known {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// envNotKeys are STREAMER_* variables that are not configuration keys.
var envNotKeys = map[string]bool{
	"STREAMER_CRASH_EXAMPLES": true, // the size of service's crash test
	"STREAMER_SCALE_RATE":     true, // the rate of service's scale-out test
}

// envName returns the environment variable of key.
func envName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// readEnvironment records the STREAMER_* variables of keys, and refuses
// one that is the variable of no key: a typo would otherwise be ignored
// silently, where --set and the file refuse it.
func (s *sources) readEnvironment(environ []string) error {
	keyOf := map[string]string{}
	for k := range s.known {
		keyOf[envName(k)] = k
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix+"_") || envNotKeys[name] {
			continue
		}
		key, ok := keyOf[name]
		if !ok {
			names := make([]string, 0, len(keyOf))
			for n := range keyOf {
				names = append(names, n)
			}
			slices.Sort(names)
			return fmt.Errorf("environment variable %s is the variable of no key of configs/streamer.yaml%s", name, didYouMean(name, names))
		}
		s.env[key] = name + "=" + shown(key, value)
		s.setValue(key, value)
	}
	return nil
}

// decodeError restates the error of decoding the keys into a Config: for
// each key whose value did not decode, where it was set, the key and why.
func (s *sources) decodeError(err error) error {
	var bad []*mapstructure.DecodeError
	collectDecodeErrors(err, &bad)
	if len(bad) == 0 {
		return fmt.Errorf("configuration: %w", err)
	}
	slices.SortFunc(bad, func(a, b *mapstructure.DecodeError) int { return strings.Compare(a.Name(), b.Name()) })
	errs := make([]error, len(bad))
	for i, de := range bad {
		key, why := de.Name(), de.Unwrap()
		if value, ok := s.values[key]; ok && strings.HasPrefix(why.Error(), "time: ") {
			// mapstructure drops the value from time.ParseDuration's error.
			if _, perr := time.ParseDuration(value); perr != nil {
				why = perr
			}
		}
		where := cmp.Or(s.of(key), "configuration")
		errs[i] = fmt.Errorf("%s: %s: %w", where, key, why)
	}
	return errors.Join(errs...)
}

// checkDurations refuses a number for a duration in the file: YAML reads
// `max_age: 1` as the integer 1, which would decode as 1ns. (A string
// from the environment or --set is parsed as a duration, which refuses
// it.)
func (s *sources) checkDurations() error {
	for _, key := range durationKeys(reflect.TypeFor[Config](), "") {
		if !s.fileNumbers[key] || s.of(key) != s.file[key] {
			continue
		}
		if value := s.values[key]; value != "0" {
			return fmt.Errorf("%s: %s: %s is not a duration: give its unit, such as %ss or %sm", s.of(key), key, value, value, value)
		}
	}
	return nil
}

// durationKeys returns the keys of the time.Duration fields of t, a
// struct of mapstructure-tagged fields, under prefix.
func durationKeys(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		key := prefix + f.Tag.Get("mapstructure")
		switch {
		case f.Type == reflect.TypeFor[time.Duration]():
			out = append(out, key)
		case f.Type.Kind() == reflect.Struct:
			out = append(out, durationKeys(f.Type, key+".")...)
		}
	}
	return out
}

// collectDecodeErrors appends the innermost mapstructure.DecodeErrors of
// err's tree to out.
func collectDecodeErrors(err error, out *[]*mapstructure.DecodeError) {
	if de, ok := err.(*mapstructure.DecodeError); ok {
		n := len(*out)
		collectDecodeErrors(de.Unwrap(), out)
		if len(*out) == n {
			*out = append(*out, de)
		}
		return
	}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			collectDecodeErrors(e, out)
		}
	case interface{ Unwrap() error }:
		if e := u.Unwrap(); e != nil {
			collectDecodeErrors(e, out)
		}
	}
}

// attribute restates a Validate error ("configuration: KEY why") with
// where KEY was set, when it was not at its default.
func (s *sources) attribute(err error) error {
	rest, ok := strings.CutPrefix(err.Error(), "configuration: ")
	if !ok {
		return err
	}
	word, _, _ := strings.Cut(rest, " ")
	key := strings.TrimSuffix(word, ":")
	if where := s.of(key); where != "" && s.known[key] {
		return fmt.Errorf("%s: %s", where, rest)
	}
	return err
}

// didYouMean returns " (did you mean K?)" for the one of candidates
// nearest name in edits, when it is near enough to be a typo of it, else
// "".
func didYouMean(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		if d := editDistance(name, c); bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > max(2, len(name)/4) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// mergeFile merges the file at path over v and records its keys in src.
func mergeFile(v *viper.Viper, path string, src *sources) error {
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
		if !src.known[k] {
			return fmt.Errorf("configuration %s: unknown key %s%s", path, k, didYouMean(k, src.keys()))
		}
		src.file[k] = "configuration " + path
		value := file.Get(k)
		src.setValue(k, fmt.Sprint(value))
		switch value.(type) {
		case int, int64, uint64, float64:
			src.fileNumbers[k] = true
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

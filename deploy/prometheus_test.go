package deploy

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// exportedMetrics returns the names of the series the service exports,
// read from its sources: the Name (with Namespace and Subsystem) of every
// prometheus.*Opts literal and the name of every prometheus.NewDesc, with
// the _bucket, _sum and _count series of histograms and summaries; and,
// for a name the code computes (from a table of metrics, say), every
// string literal of the form streamer_* in a file that imports
// client_golang's prometheus package.
func exportedMetrics() (map[string]bool, error) {
	names := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != ".." && (path == "../deploy" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		return metricsOfFile(path, names)
	})
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no metric registered in the service's sources")
	}
	return names, nil
}

// seriesSuffixes are the series Prometheus scrapes besides a metric's own
// name, by the kind of its options.
var seriesSuffixes = map[string][]string{
	"CounterOpts":   {""},
	"GaugeOpts":     {""},
	"UntypedOpts":   {""},
	"Opts":          {""},
	"HistogramOpts": {"_bucket", "_sum", "_count"},
	"SummaryOpts":   {"", "_sum", "_count"},
}

// metricsOfFile adds the metrics the Go file path registers to names.
func metricsOfFile(path string, names map[string]bool) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool {
		return s.Path.Value == `"github.com/prometheus/client_golang/prometheus"`
	}) {
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		name, suffixes := metricOf(n)
		for _, s := range suffixes {
			names[name+s] = true
		}
		if s, err := stringLiteral(n); err == nil && metricName.MatchString(s) {
			names[s] = true
		}
		return true
	})
	return nil
}

var metricName = regexp.MustCompile(`^streamer_[a-z0-9_]+$`)

// metricOf returns the metric name node declares, if it is a
// prometheus.*Opts literal or a prometheus.NewDesc call whose name is
// literal, and its series' suffixes.
func metricOf(n ast.Node) (string, []string) {
	switch n := n.(type) {
	case *ast.CompositeLit:
		sel, ok := n.Type.(*ast.SelectorExpr)
		if !ok || seriesSuffixes[sel.Sel.Name] == nil {
			return "", nil
		}
		parts := map[string]string{}
		for _, e := range n.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, _ := kv.Key.(*ast.Ident)
			if key == nil || (key.Name != "Namespace" && key.Name != "Subsystem" && key.Name != "Name") {
				continue
			}
			s, err := stringLiteral(kv.Value)
			if err != nil {
				return "", nil
			}
			parts[key.Name] = s
		}
		return fqName(parts["Namespace"], parts["Subsystem"], parts["Name"]), seriesSuffixes[sel.Sel.Name]
	case *ast.CallExpr:
		sel, ok := n.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "NewDesc" || len(n.Args) == 0 {
			return "", nil
		}
		if s, err := stringLiteral(n.Args[0]); err == nil {
			return s, []string{""}
		}
	}
	return "", nil
}

// stringLiteral returns the value of a string literal; a name computed at
// run time cannot be checked here.
func stringLiteral(e ast.Node) (string, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", fmt.Errorf("not a string literal, which this test cannot read")
	}
	return strconv.Unquote(lit.Value)
}

// fqName joins the non-empty parts as prometheus.BuildFQName does.
func fqName(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), "_")
}

var (
	serviceMetric = regexp.MustCompile(`\bstreamer_\w+`)
	quoted        = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
)

// unknownMetrics returns the streamer_* names a PromQL expression uses
// that are not in known; names inside string literals (label values) are
// not metrics.
func unknownMetrics(expr string, known map[string]bool) []string {
	var out []string
	for _, name := range serviceMetric.FindAllString(quoted.ReplaceAllString(expr, `""`), -1) {
		if !known[name] && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// ruleFile is a Prometheus rule file (the rule_files of its configuration).
type ruleFile struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name        string            `json:"name"`
	Interval    string            `json:"interval,omitempty"`
	QueryOffset string            `json:"query_offset,omitempty"`
	Limit       int               `json:"limit,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Rules       []rule            `json:"rules"`
}

type rule struct {
	Record        string            `json:"record,omitempty"`
	Alert         string            `json:"alert,omitempty"`
	Expr          string            `json:"expr"`
	For           string            `json:"for,omitempty"`
	KeepFiringFor string            `json:"keep_firing_for,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// promDuration is Prometheus' duration syntax (model.ParseDuration).
var promDuration = regexp.MustCompile(`^(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?$`)

// TestAlerts: prometheus/alerts.yaml is a rule file whose rules use only
// the service's metrics.
func TestAlerts(t *testing.T) {
	const file = "prometheus/alerts.yaml"
	known, err := exportedMetrics()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(data, &rf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(rf.Groups) == 0 {
		t.Fatalf("%s: no rule group", file)
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				known[r.Record] = true
			}
		}
	}
	groups := map[string]bool{}
	for i, g := range rf.Groups {
		if g.Name == "" || groups[g.Name] {
			t.Errorf("%s: groups[%d]: name %q is empty or not unique", file, i, g.Name)
		}
		groups[g.Name] = true
		for j, r := range g.Rules {
			for _, err := range ruleErrors(r, known) {
				t.Errorf("%s: group %s rule %d (%s): %v", file, g.Name, j, r.Alert+r.Record, err)
			}
		}
	}
}

// ruleErrors says what is wrong with r.
func ruleErrors(r rule, known map[string]bool) []error {
	var errs []error
	if (r.Alert == "") == (r.Record == "") {
		errs = append(errs, fmt.Errorf("want one of alert and record"))
	}
	if strings.TrimSpace(r.Expr) == "" {
		errs = append(errs, fmt.Errorf("expr is empty"))
	}
	for field, d := range map[string]string{"for": r.For, "keep_firing_for": r.KeepFiringFor} {
		if d != "" && !promDuration.MatchString(d) {
			errs = append(errs, fmt.Errorf("%s %q is not a Prometheus duration", field, d))
		}
	}
	if r.Alert != "" && (r.Labels["severity"] == "" || r.Annotations["summary"] == "") {
		errs = append(errs, fmt.Errorf("an alert needs labels.severity, for routing, and annotations.summary"))
	}
	for _, name := range unknownMetrics(r.Expr, known) {
		errs = append(errs, fmt.Errorf("expr uses %s, which the service does not export", name))
	}
	return errs
}

// TestDashboard: every query of grafana/streamer.json uses only the
// service's metrics.
func TestDashboard(t *testing.T) {
	const file = "grafana/streamer.json"
	known, err := exportedMetrics()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var dashboard any
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	exprs := map[string]string{}
	collectExprs(dashboard, "", exprs)
	if len(exprs) == 0 {
		t.Fatalf("%s: no expr", file)
	}
	for at, expr := range exprs {
		for _, name := range unknownMetrics(expr, known) {
			t.Errorf("%s: %s uses %s, which the service does not export", file, at, name)
		}
	}
}

// collectExprs adds the "expr" strings of a JSON tree to exprs, by their
// path.
func collectExprs(v any, at string, exprs map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "expr" {
				exprs[at+"/expr"] = s
			}
			collectExprs(e, at+"/"+k, exprs)
		}
	case []any:
		for i, e := range v {
			collectExprs(e, at+"/"+strconv.Itoa(i), exprs)
		}
	}
}

// adapterConfig is a prometheus-adapter configuration.
type adapterConfig struct {
	Rules         []adapterRule  `json:"rules,omitempty"`
	ExternalRules []adapterRule  `json:"externalRules,omitempty"`
	ResourceRules map[string]any `json:"resourceRules,omitempty"`
}

type adapterRule struct {
	SeriesQuery   string `json:"seriesQuery"`
	SeriesFilters []struct {
		Is    string `json:"is,omitempty"`
		IsNot string `json:"isNot,omitempty"`
	} `json:"seriesFilters,omitempty"`
	Resources struct {
		Template   string `json:"template,omitempty"`
		Namespaced *bool  `json:"namespaced,omitempty"`
		Overrides  map[string]struct {
			Group    string `json:"group,omitempty"`
			Resource string `json:"resource"`
		} `json:"overrides,omitempty"`
	} `json:"resources"`
	Name struct {
		Matches string `json:"matches"`
		As      string `json:"as,omitempty"`
	} `json:"name"`
	MetricsQuery string `json:"metricsQuery"`
}

const adapterFile = "prometheus/adapter-rules.yaml"

// adapterMetrics returns the metric names prometheus/adapter-rules.yaml
// serves to the custom and external metrics APIs: each rule's name.as
// applied to the exported metrics its name.matches matches. A rule that
// uses a metric the service does not export is an error.
func adapterMetrics() (map[string]bool, error) {
	known, err := exportedMetrics()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(adapterFile)
	if err != nil {
		return nil, err
	}
	var ac adapterConfig
	if err := yaml.UnmarshalStrict(data, &ac); err != nil {
		return nil, fmt.Errorf("%s: %w", adapterFile, err)
	}
	served := map[string]bool{}
	for i, r := range slices.Concat(ac.Rules, ac.ExternalRules) {
		if err := serveRule(r, known, served); err != nil {
			return nil, fmt.Errorf("%s: rule %d (%s): %w", adapterFile, i, r.SeriesQuery, err)
		}
	}
	return served, nil
}

// serveRule adds the names rule r serves to served.
func serveRule(r adapterRule, known, served map[string]bool) error {
	for _, q := range []string{r.SeriesQuery, r.MetricsQuery} {
		if bad := unknownMetrics(q, known); len(bad) > 0 {
			return fmt.Errorf("uses %v, which the service does not export", bad)
		}
	}
	re, err := regexp.Compile(r.Name.Matches)
	if err != nil {
		return fmt.Errorf("name.matches: %w", err)
	}
	as := r.Name.As
	if as == "" {
		as = "$0"
		if re.NumSubexp() == 1 {
			as = "$1"
		}
	}
	found := false
	for name := range known {
		if m := re.FindStringSubmatchIndex(name); m != nil {
			served[string(re.ExpandString(nil, as, name, m))] = true
			found = true
		}
	}
	if !found {
		return fmt.Errorf("name.matches %q matches no exported metric", r.Name.Matches)
	}
	return nil
}

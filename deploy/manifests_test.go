package deploy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// A document is one YAML document of a manifest file, decoded into the
// type of its apiVersion and kind.
type document struct {
	file  string // relative to deploy/
	index int    // position in the file, from 0
	kind  string
	name  string
	obj   any
}

func (d document) String() string {
	return fmt.Sprintf("%s document %d (%s %s)", d.file, d.index, d.kind, d.name)
}

// A bundle is the documents of one directory of kubernetes/, which are
// applied together (kubectl apply -k).
type bundle struct {
	dir  string
	docs []document
	// containers are the service's containers of the workloads, with the
	// configuration each loads; configErrs say why one did not load.
	containers []container
	configErrs []error
}

// kustomization is the part of a kustomize.config.k8s.io Kustomization
// these manifests use; a field beyond it fails the strict decoding, so
// that a new one is looked at here.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// custom is a document of a custom resource, whose Go type this module
// does not carry: it is decoded loosely and checked by its kind's check.
type custom struct {
	APIVersion string
	Kind       string
	Object     map[string]any
}

// typedKinds are the kinds decoded strictly, by "apiVersion/kind".
var typedKinds = map[string]func() any{
	"v1/ConfigMap":                                  func() any { return new(corev1.ConfigMap) },
	"v1/Secret":                                     func() any { return new(corev1.Secret) },
	"v1/Service":                                    func() any { return new(corev1.Service) },
	"v1/ServiceAccount":                             func() any { return new(corev1.ServiceAccount) },
	"v1/PersistentVolumeClaim":                      func() any { return new(corev1.PersistentVolumeClaim) },
	"apps/v1/Deployment":                            func() any { return new(appsv1.Deployment) },
	"apps/v1/StatefulSet":                           func() any { return new(appsv1.StatefulSet) },
	"autoscaling/v2/HorizontalPodAutoscaler":        func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	"policy/v1/PodDisruptionBudget":                 func() any { return new(policyv1.PodDisruptionBudget) },
	"kustomize.config.k8s.io/v1beta1/Kustomization": func() any { return new(kustomization) },
}

// customKinds are the custom resources known, with the fields each must
// have, as paths of keys.
var customKinds = map[string][][]string{
	"monitoring.coreos.com/v1/ServiceMonitor": {{"metadata", "name"}, {"spec", "selector"}, {"spec", "endpoints"}},
	"monitoring.coreos.com/v1/PodMonitor":     {{"metadata", "name"}, {"spec", "selector"}, {"spec", "podMetricsEndpoints"}},
}

// loadBundles reads every directory of kubernetes/, failing the test on a
// document that does not decode.
func loadBundles(t *testing.T) []bundle {
	t.Helper()
	dirs, err := filepath.Glob("kubernetes/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("kubernetes/: no directory of manifests (%v)", err)
	}
	var out []bundle
	for _, dir := range dirs {
		b, err := readBundle(dir)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// readBundle decodes the YAML files of dir.
func readBundle(dir string) (bundle, error) {
	b := bundle{dir: dir}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return b, err
	}
	for _, file := range files {
		docs, err := readFile(file)
		if err != nil {
			return b, err
		}
		b.docs = append(b.docs, docs...)
	}
	if len(b.docs) == 0 {
		return b, fmt.Errorf("%s: no manifest", dir)
	}
	return b, nil
}

// readFile decodes every document of a manifest file.
func readFile(file string) ([]document, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var docs []document
	for i, part := range splitDocuments(data) {
		d, empty, err := decodeDocument(file, i, part)
		if err != nil {
			return nil, err
		}
		if !empty {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

var separator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// splitDocuments splits a YAML stream at its "---" lines.
func splitDocuments(data []byte) [][]byte {
	var out [][]byte
	for _, part := range separator.Split(string(data), -1) {
		out = append(out, []byte(part))
	}
	return out
}

// decodeDocument decodes one document by its apiVersion and kind: strictly
// into the API type of a known kind, loosely for a known custom resource.
// A document of comments only is empty.
func decodeDocument(file string, index int, data []byte) (d document, empty bool, err error) {
	d = document{file: file, index: index}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return d, false, fmt.Errorf("%s document %d: %w", file, index, err)
	}
	if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
		return d, true, nil
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return d, false, fmt.Errorf("%s document %d: %w", file, index, err)
	}
	d.kind, d.name = head.Kind, head.Metadata.Name
	key := head.APIVersion + "/" + head.Kind
	if newObj, ok := typedKinds[key]; ok {
		d.obj = newObj()
		if err := yaml.UnmarshalStrict(data, d.obj); err != nil {
			return d, false, fmt.Errorf("%s: %w", d, err)
		}
		return d, false, nil
	}
	if required, ok := customKinds[key]; ok {
		c := custom{APIVersion: head.APIVersion, Kind: head.Kind}
		if err := yaml.Unmarshal(data, &c.Object); err != nil {
			return d, false, fmt.Errorf("%s: %w", d, err)
		}
		for _, path := range required {
			if lookup(c.Object, path...) == nil {
				return d, false, fmt.Errorf("%s: no %s", d, strings.Join(path, "."))
			}
		}
		d.obj = c
		return d, false, nil
	}
	return d, false, fmt.Errorf("%s: unknown kind %q of apiVersion %q: add it to typedKinds or customKinds", d, head.Kind, head.APIVersion)
}

// lookup returns the value at path in a decoded YAML tree, or nil.
func lookup(tree map[string]any, path ...string) any {
	var v any = tree
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// objects returns the documents of b whose object is a T.
func objects[T any](b bundle) []T {
	var out []T
	for _, d := range b.docs {
		if o, ok := d.obj.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

// find returns the document of b of kind and name.
func (b bundle) find(kind, name string) (document, bool) {
	i := slices.IndexFunc(b.docs, func(d document) bool { return d.kind == kind && d.name == name })
	if i < 0 {
		return document{}, false
	}
	return b.docs[i], true
}

package deploy

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"streamer/config"
)

// A workload is a Deployment or a StatefulSet.
type workload struct {
	doc      document
	replicas int32
	selector *metav1.LabelSelector
	pod      corev1.PodTemplateSpec
}

// workloads returns the Deployments and StatefulSets of b.
func workloads(b bundle) []workload {
	var out []workload
	for _, d := range b.docs {
		switch o := d.obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{d, replicasOf(o.Spec.Replicas), o.Spec.Selector, o.Spec.Template})
		case *appsv1.StatefulSet:
			out = append(out, workload{d, replicasOf(o.Spec.Replicas), o.Spec.Selector, o.Spec.Template})
		}
	}
	return out
}

// replicasOf is a workload's replica count; Kubernetes' default is 1.
func replicasOf(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

// selects reports whether sel selects the pods of w.
func (w workload) selects(sel *metav1.LabelSelector) (bool, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	return !s.Empty() && s.Matches(labels.Set(w.pod.Labels)), nil
}

// TestKubernetes runs the checks of every directory of kubernetes/.
func TestKubernetes(t *testing.T) {
	checks := []struct {
		name string
		run  func(*testing.T, bundle)
	}{
		{"configurations", checkConfigurations},
		{"kustomization", checkKustomization},
		{"selectors", checkSelectors},
		{"references", checkReferences},
		{"containers", checkContainers},
		{"services", checkServices},
		{"autoscalers", checkAutoscalers},
		{"disruption budgets", checkDisruptionBudgets},
	}
	for _, b := range loadBundles(t) {
		b.containers, b.configErrs = loadContainers(b, t.TempDir())
		for _, c := range checks {
			t.Run(b.dir+"/"+c.name, func(t *testing.T) { c.run(t, b) })
		}
	}
}

// checkKustomization: the kustomization applies every file of its
// directory, and only files that are there.
func checkKustomization(t *testing.T, b bundle) {
	ks := objects[*kustomization](b)
	if len(ks) != 1 {
		t.Fatalf("%s: %d kustomizations, want 1", b.dir, len(ks))
	}
	files := map[string]bool{}
	for _, d := range b.docs {
		if _, ok := d.obj.(*kustomization); !ok {
			files[filepath.Base(d.file)] = true
		}
	}
	for _, r := range ks[0].Resources {
		if !files[r] {
			t.Errorf("%s/kustomization.yaml: resources: %s is not a manifest of the directory", b.dir, r)
		}
		delete(files, r)
	}
	for f := range files {
		t.Errorf("%s/kustomization.yaml: resources: %s is not listed, so kubectl apply -k leaves it out", b.dir, f)
	}
}

// checkSelectors: every workload's selector selects its own pods.
func checkSelectors(t *testing.T, b bundle) {
	ws := workloads(b)
	if len(ws) == 0 {
		t.Fatalf("%s: no Deployment or StatefulSet", b.dir)
	}
	for _, w := range ws {
		ok, err := w.selects(w.selector)
		if err != nil || !ok {
			t.Errorf("%s: spec.selector %v does not select spec.template.metadata.labels %v (%v)",
				w.doc, w.selector, w.pod.Labels, err)
		}
	}
}

// checkReferences: every ConfigMap and Secret a pod names, by volume, by
// env or by envFrom, is in the directory with the keys named.
func checkReferences(t *testing.T, b bundle) {
	for _, w := range workloads(b) {
		for _, err := range podReferences(b, w) {
			t.Errorf("%s: %v", w.doc, err)
		}
	}
}

// podReferences returns what w refers to and b lacks.
func podReferences(b bundle, w workload) []error {
	var errs []error
	for _, v := range w.pod.Spec.Volumes {
		if v.ConfigMap != nil {
			errs = append(errs, hasKeys(b, "ConfigMap", v.ConfigMap.Name, itemKeys(v.ConfigMap.Items), v.ConfigMap.Optional))
		}
		if v.Secret != nil {
			errs = append(errs, hasKeys(b, "Secret", v.Secret.SecretName, itemKeys(v.Secret.Items), v.Secret.Optional))
		}
	}
	for _, c := range slices.Concat(w.pod.Spec.InitContainers, w.pod.Spec.Containers) {
		for _, e := range c.Env {
			if r := e.ValueFrom; r != nil && r.ConfigMapKeyRef != nil {
				errs = append(errs, hasKeys(b, "ConfigMap", r.ConfigMapKeyRef.Name, []string{r.ConfigMapKeyRef.Key}, r.ConfigMapKeyRef.Optional))
			}
			if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
				errs = append(errs, hasKeys(b, "Secret", r.SecretKeyRef.Name, []string{r.SecretKeyRef.Key}, r.SecretKeyRef.Optional))
			}
		}
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				errs = append(errs, hasKeys(b, "ConfigMap", e.ConfigMapRef.Name, nil, e.ConfigMapRef.Optional))
			}
			if e.SecretRef != nil {
				errs = append(errs, hasKeys(b, "Secret", e.SecretRef.Name, nil, e.SecretRef.Optional))
			}
		}
	}
	return slices.DeleteFunc(errs, func(err error) bool { return err == nil })
}

func itemKeys(items []corev1.KeyToPath) []string {
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	return keys
}

// hasKeys says what is missing of the ConfigMap or Secret name and its
// keys; an optional reference may miss.
func hasKeys(b bundle, kind, name string, keys []string, optional *bool) error {
	if optional != nil && *optional {
		return nil
	}
	data, ok := dataOf(b, kind, name)
	if !ok {
		return fmt.Errorf("refers to %s %q, which is not in %s", kind, name, b.dir)
	}
	for _, k := range keys {
		if _, ok := data[k]; !ok {
			return fmt.Errorf("refers to key %q of %s %q, which has no such key", k, kind, name)
		}
	}
	return nil
}

// dataOf returns the data of the ConfigMap or Secret name of b.
func dataOf(b bundle, kind, name string) (map[string]string, bool) {
	d, ok := b.find(kind, name)
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	switch o := d.obj.(type) {
	case *corev1.ConfigMap:
		maps.Copy(out, o.Data)
		for k, v := range o.BinaryData {
			out[k] = string(v)
		}
	case *corev1.Secret:
		for k, v := range o.Data {
			out[k] = string(v)
		}
		maps.Copy(out, o.StringData)
	}
	return out, true
}

// checkServices: a Service selects pods of the directory, on a port they
// have.
func checkServices(t *testing.T, b bundle) {
	for _, d := range b.docs {
		s, ok := d.obj.(*corev1.Service)
		if !ok {
			continue
		}
		selected := selectedBy(b, &metav1.LabelSelector{MatchLabels: s.Spec.Selector})
		if len(selected) == 0 {
			t.Errorf("%s: spec.selector %v selects no workload's pods", d, s.Spec.Selector)
		}
		for _, w := range selected {
			for _, p := range s.Spec.Ports {
				if err := servesPort(w, p); err != nil {
					t.Errorf("%s: spec.ports %s: %v", d, p.Name, err)
				}
			}
		}
	}
}

// selectedBy returns the workloads of b whose pods sel selects.
func selectedBy(b bundle, sel *metav1.LabelSelector) []workload {
	var out []workload
	for _, w := range workloads(b) {
		if ok, _ := w.selects(sel); ok {
			out = append(out, w)
		}
	}
	return out
}

// servesPort says whether a container of w has the target port of p.
func servesPort(w workload, p corev1.ServicePort) error {
	target := p.TargetPort
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(p.Port)
	}
	for _, c := range w.pod.Spec.Containers {
		if _, err := containerPort(c, target); err == nil {
			return nil
		}
	}
	return fmt.Errorf("targetPort %s is no container port of %s", target.String(), w.doc)
}

// autoscalerOf returns the name of the HorizontalPodAutoscaler of b that
// scales w, or "".
func autoscalerOf(b bundle, w workload) string {
	for _, h := range objects[*autoscalingv2.HorizontalPodAutoscaler](b) {
		ref := h.Spec.ScaleTargetRef
		if ref.Kind == w.doc.kind && ref.Name == w.doc.name {
			return h.Name
		}
	}
	return ""
}

// checkAutoscalers: an autoscaler scales a scorer Deployment of the
// directory, to no more replicas than the examples topic has partitions,
// on metrics the Prometheus adapter serves.
func checkAutoscalers(t *testing.T, b bundle) {
	served, err := adapterMetrics()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range b.docs {
		h, ok := d.obj.(*autoscalingv2.HorizontalPodAutoscaler)
		if !ok {
			continue
		}
		for _, err := range autoscalerErrors(b, h, served) {
			t.Errorf("%s: %v", d, err)
		}
	}
}

func autoscalerErrors(b bundle, h *autoscalingv2.HorizontalPodAutoscaler, served map[string]bool) []error {
	var errs []error
	ref := h.Spec.ScaleTargetRef
	if min := replicasOf(h.Spec.MinReplicas); min < 1 || min > h.Spec.MaxReplicas {
		errs = append(errs, fmt.Errorf("spec.minReplicas %d, spec.maxReplicas %d: want 1 <= min <= max", min, h.Spec.MaxReplicas))
	}
	target, ok := b.find(ref.Kind, ref.Name)
	if !ok || ref.APIVersion != "apps/v1" || (ref.Kind != "Deployment" && ref.Kind != "StatefulSet") {
		return append(errs, fmt.Errorf("spec.scaleTargetRef %s %s %s is no Deployment or StatefulSet of %s", ref.APIVersion, ref.Kind, ref.Name, b.dir))
	}
	for _, c := range b.containers {
		if c.w.doc.file != target.file || c.w.doc.index != target.index {
			continue
		}
		if c.cfg.Role != config.RoleScorer {
			errs = append(errs, fmt.Errorf("spec.scaleTargetRef %s runs role %s; only scorers scale", ref.Name, c.cfg.Role))
		}
		if int(h.Spec.MaxReplicas) > c.cfg.Kafka.Partitions {
			errs = append(errs, fmt.Errorf("spec.maxReplicas %d is more than kafka.partitions %d of %s: the rest would sit idle",
				h.Spec.MaxReplicas, c.cfg.Kafka.Partitions, ref.Name))
		}
		errs = append(errs, metricErrors(h, c, served)...)
	}
	return errs
}

// metricErrors: every metric the autoscaler reads is served by a rule of
// prometheus/adapter-rules.yaml, and a topic selector names a topic of the
// configuration.
func metricErrors(h *autoscalingv2.HorizontalPodAutoscaler, c container, served map[string]bool) []error {
	var errs []error
	topics := []string{c.cfg.Kafka.Topics.Examples, c.cfg.Kafka.Topics.Labels}
	for i, m := range h.Spec.Metrics {
		var id *autoscalingv2.MetricIdentifier
		switch {
		case m.External != nil:
			id = &m.External.Metric
		case m.Pods != nil:
			id = &m.Pods.Metric
		case m.Object != nil:
			id = &m.Object.Metric
		default:
			continue
		}
		if !served[id.Name] {
			errs = append(errs, fmt.Errorf("spec.metrics[%d]: %s is served by no rule of prometheus/adapter-rules.yaml", i, id.Name))
		}
		if id.Selector == nil {
			continue
		}
		if topic, ok := id.Selector.MatchLabels["topic"]; ok && !slices.Contains(topics, topic) {
			errs = append(errs, fmt.Errorf("spec.metrics[%d]: selector topic=%s is not an input topic of %s (%v)", i, topic, c, topics))
		}
	}
	return errs
}

// checkDisruptionBudgets: a PodDisruptionBudget selects pods of the
// directory.
func checkDisruptionBudgets(t *testing.T, b bundle) {
	for _, d := range b.docs {
		p, ok := d.obj.(*policyv1.PodDisruptionBudget)
		if ok && len(selectedBy(b, p.Spec.Selector)) == 0 {
			t.Errorf("%s: spec.selector selects no workload's pods", d)
		}
	}
}

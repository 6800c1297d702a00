// Package deploy holds no code of the service: its tests check the
// deployment files beside it against each other and against the service.
//
//   - Every document of kubernetes/*/*.yaml decodes strictly into its
//     Kubernetes API type (an unknown kind or field fails), and each
//     directory's kustomization lists exactly its files.
//   - Workloads: selectors match the pod labels; every container runs the
//     image `make image` builds, as non-root with a read-only root file
//     system, with resource requests, and with /livez and /readyz probes
//     and Prometheus annotations on the port of its http.listen.
//   - The configuration a container reads (its ConfigMap, the image's and
//     the container's STREAMER_* variables, its --set flags) loads with
//     the service's own config.Load; the ConfigMaps and Secrets referred
//     to exist with the keys referred to; learners are an active and a
//     standby; the autoscaler scales a scorer Deployment on a metric that
//     prometheus/adapter-rules.yaml serves.
//   - prometheus/alerts.yaml decodes as Prometheus rule groups, and it, the
//     adapter rules and grafana/streamer.json name only metrics that the
//     service's sources register.
//   - systemd/streamer.service runs `streamer run --config …` as a user
//     other than root.
//
// The module is separate from the service's so that the service does not
// carry the Kubernetes API modules; it reaches the service's packages
// through a replace directive.
package deploy

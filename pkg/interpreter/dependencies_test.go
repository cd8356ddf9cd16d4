package interpreter

import (
	"fmt"
	"strings"
	"testing"
)

func TestGetDependencies(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		want string
	}{
		{"every kind of reference, sorted, once each", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      serviceAccountName: web-sa
      imagePullSecrets: [{name: registry}]
      volumes:
      - {name: a, configMap: {name: settings}}
      - {name: b, secret: {secretName: tls}}
      - {name: c, persistentVolumeClaim: {claimName: data}}
      - {name: d, projected: {sources: [{configMap: {name: extra}}, {secret: {name: token}}]}}
      - {name: e, emptyDir: {}}
      initContainers:
      - {name: init, image: busybox, envFrom: [{configMapRef: {name: settings}}]}
      containers:
      - name: app
        image: nginx
        envFrom: [{secretRef: {name: env-secret}}]
        env:
        - {name: A, valueFrom: {configMapKeyRef: {name: keys, key: a}}}
        - {name: B, valueFrom: {secretKeyRef: {name: tls, key: b}}}
        - {name: C, value: plain}
`, "ConfigMap shop/extra, ConfigMap shop/keys, ConfigMap shop/settings, PersistentVolumeClaim shop/data, " +
			"Secret shop/env-secret, Secret shop/registry, Secret shop/tls, Secret shop/token, ServiceAccount shop/web-sa"},
		{"the default ServiceAccount is everywhere", `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec: {serviceAccountName: default, containers: [{name: c, image: x}]}
`, ""},
		{"a CronJob's pod template", `
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ns}
spec:
  schedule: "0 0 * * *"
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: x, envFrom: [{configMapRef: {name: cfg}}]}]}}}}
`, "ConfigMap ns/cfg"},
		{"kinds without a pod template have none", `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: ns}
`, ""},
		{"an unknown kind has none", `
apiVersion: example.io/v1
kind: Widget
metadata: {name: w, namespace: ns}
spec: {template: {spec: {volumes: [{name: a, configMap: {name: cfg}}]}}}
`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deps, err := New().Dependencies(parse(t, tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range deps {
				got = append(got, fmt.Sprintf("%s %s/%s", d.Kind, d.Namespace, d.Name))
			}
			if s := strings.Join(got, ", "); s != tc.want {
				t.Errorf("got  %s\nwant %s", s, tc.want)
			}
		})
	}
	// A pod spec that does not decode is an error, not an empty list.
	if _, err := New().Dependencies(parse(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad, namespace: ns}
spec: {template: {spec: {volumes: "not a list"}}}
`)); err == nil {
		t.Error("a broken pod spec gave no error")
	}
}

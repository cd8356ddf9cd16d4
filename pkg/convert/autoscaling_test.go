package convert

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/admission"
	"github.com/shepherd-io/shepherd/pkg/controllers/cronfederatedhpa"
)

// TestKarmadaAutoscalingExamples: the examples of Karmada's documentation
// (testdata/karmada/autoscaling.yaml, as Karmada writes them) convert into
// examples/autoscaling/*-from-karmada.yaml, which the CRD tests validate
// and the integration tests apply, but for what the report says changed:
// the CronFederatedHPA's FederatedHPA is named in Shepherd's group.
func TestKarmadaAutoscalingExamples(t *testing.T) {
	_, objs, report := convertPaths(t, filepath.Join(corpus, "autoscaling.yaml"))
	got := map[string]map[string]any{}
	for _, o := range objs {
		got[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = o.Object
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "autoscaling", "*-from-karmada.yaml"))
	if err != nil || len(files) != 2 {
		t.Fatalf("examples: %v %v", files, err)
	}
	compared := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var want map[string]any
			if err := yaml.Unmarshal([]byte(doc), &want); err != nil {
				t.Fatal(err)
			}
			md, _ := want["metadata"].(map[string]any)
			id := want["kind"].(string) + " " + md["namespace"].(string) + "/" + md["name"].(string)
			// examples/autoscaling keeps Karmada's group where Shepherd
			// reads it as its own; the converter writes Shepherd's.
			if ref := nested(want, "spec", "scaleTargetRef"); str(ref, "apiVersion") == KarmadaAutoscalingGroup+"/v1alpha1" {
				ref["apiVersion"] = ShepherdAutoscalingGroup + "/v1alpha1"
			}
			out, ok := got[id]
			if !ok {
				t.Errorf("%s: %s was not converted", f, id)
				continue
			}
			// Compare as YAML: the reader keeps numbers as written.
			a, _ := yaml.Marshal(out)
			b, _ := yaml.Marshal(want)
			if string(a) != string(b) {
				t.Errorf("%s converts into\n%s\nexamples/autoscaling has\n%s", id, a, b)
			}
			compared++
		}
	}
	if compared != 3 {
		t.Errorf("compared %d examples, want 3", compared)
	}
	var entries []string
	for _, e := range report.Entries {
		entries = append(entries, e.Kind+" "+e.Namespace+"/"+e.Name+" "+e.Field+" "+string(e.Action)+" "+e.Rule)
	}
	want := []string{
		"CronFederatedHPA default/nginx-fhpa-cronfhpa spec.scaleTargetRef.apiVersion changed cron-target-group",
		"FederatedHPA shop/sample-app spec.metrics[1].resource.target.type changed fhpa-target-type",
	}
	if !slices.Equal(entries, want) {
		t.Errorf("report\n%s\nwant\n%s", strings.Join(entries, "\n"), strings.Join(want, "\n"))
	}
	if report.Incomplete() || report.Converted != 5 {
		t.Errorf("converted %d, incomplete %v", report.Converted, report.Incomplete())
	}
}

// TestOnePerTarget: of FederatedHPAs on one target (same namespace, group,
// kind and name), whatever their group, the first by name is kept and the
// others are skipped naming it, whatever the order of the input.
func TestOnePerTarget(t *testing.T) {
	docs := []string{
		fhpa("b", ""),
		fhpa("a", ""),
		strings.Replace(fhpa("c", ""), "apps/v1", "apps.example.com/v1", 1),
		strings.Replace(fhpa("d", ""), "kind: Deployment", "kind: StatefulSet", 1),
		strings.Replace(fhpa("e", ""), "name: web", "name: api", 1),
		strings.Replace(fhpa("f", ""), "namespace: shop", "namespace: other", 1),
		// Another version of the same group is the same target, and a
		// FederatedHPA already in Shepherd's group claims it as well.
		strings.Replace(strings.Replace(fhpa("g", ""), "karmada.io", "shepherd.io", 1), "apps/v1", "apps/v1beta2", 1),
	}
	for _, tc := range []struct {
		name  string
		order []int
	}{
		{"as written", []int{0, 1, 2, 3, 4, 5, 6}},
		{"reversed", []int{6, 5, 4, 3, 2, 1, 0}},
		{"kept one last", []int{6, 0, 2, 3, 4, 5, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []string
			for _, i := range tc.order {
				in = append(in, docs[i])
			}
			objs, report := convertString(t, strings.Join(in, "---\n"))
			var kept []string
			for _, o := range objs {
				kept = append(kept, o.GetNamespace()+"/"+o.GetName())
			}
			if want := []string{"other/f", "shop/a", "shop/c", "shop/d", "shop/e"}; !slices.Equal(kept, want) {
				t.Errorf("kept %v, want %v", kept, want)
			}
			var skipped []string
			for _, e := range report.Entries {
				if e.Rule != "fhpa-one-per-target" {
					t.Errorf("unexpected entry %+v", e)
					continue
				}
				skipped = append(skipped, e.Name)
				if e.Action != Skipped || e.Field != "spec.scaleTargetRef" || !strings.Contains(e.Message, "Deployment shop/web is already scaled by FederatedHPA a (read from in.yaml:") {
					t.Errorf("entry %+v", e)
				}
			}
			if !slices.Equal(skipped, []string{"b", "g"}) {
				t.Errorf("skipped %v, want [b g]", skipped)
			}
			if !report.Incomplete() {
				t.Error("a skipped FederatedHPA must make the report incomplete")
			}
		})
	}
}

// TestAutoscalersDecode: what the rules write decodes into Shepherd's
// types (the strict decode of convertOne), and what they refuse is not
// written at all.
func TestAutoscalersDecode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		written bool
	}{
		{"target type rewritten", fhpa("h", "metrics:\n- type: Resource\n  resource: {name: memory, target: {type: Value, averageValue: 512Mi}}"), true},
		{"utilization above 100", fhpa("h", "metrics:\n- type: Resource\n  resource: {name: cpu, target: {type: Utilization, averageUtilization: 120}}"), false},
		{"maxReplicas of the wrong type", fhpa("h", "minReplicas: two"), false},
		{"bad schedule", cronFHPA("scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\nrules:\n- {name: up, schedule: 'every day', targetReplicas: 5}"), false},
		{"rules of the wrong type", cronFHPA("scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\nrules: {name: up}"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, report := convertString(t, tc.in)
			if got := len(objs) == 1; got != tc.written {
				t.Fatalf("written %v, want %v; report %+v", got, tc.written, report.Entries)
			}
			if !tc.written {
				if !report.Incomplete() {
					t.Errorf("not written, yet the report is complete: %+v", report.Entries)
				}
				return
			}
			k := kinds[objs[0].GetKind()]
			if err := k.decode(objs[0].Object); err != nil {
				t.Error(err)
			}
			if v := objs[0].GetAPIVersion(); v != "autoscaling.shepherd.io/v1alpha1" {
				t.Errorf("apiVersion %s", v)
			}
		})
	}
}

// TestScheduleCheckMatchesTheHub: the converter refuses exactly the
// schedules and time zones the hub's webhook refuses and the
// CronFederatedHPA controller cannot run, among them what Karmada's
// webhook lets through.
func TestScheduleCheckMatchesTheHub(t *testing.T) {
	for _, tc := range []struct {
		schedule, timeZone string
		refused            bool
	}{
		{"*/1 * * * *", "", false},
		{"30 7 * * 1-5", "Europe/Paris", false},
		{"0 0 1 JAN *", "UTC", false},
		{"@hourly", "", false},
		{"@midnight", "", false},
		{"@every 1h", "", false}, // Karmada's webhook refuses it, Shepherd's accepts it
		{"0 8 * * MON-FRI", "Asia/Tokyo", false},
		{"0 */1 * * * *", "", true}, // six fields: Karmada's webhook accepts them
		{"@5minutes", "", true},     // a descriptor of Karmada's webhook only
		{"0 0 L * *", "", true},
		{"CRON_TZ=UTC 0 8 * * *", "", true},
		{"TZ=Europe/Paris 0 8 * * *", "", true},
		{"61 * * * *", "", true},
		{"every day", "", true},
		{"", "", true},
		{"0 8 * * *", "Mars/Olympus_Mons", true},
	} {
		t.Run(tc.schedule+" "+tc.timeZone, func(t *testing.T) {
			var zone *string
			if tc.timeZone != "" {
				zone = &tc.timeZone
			}
			_, _, ctrlErr := cronfederatedhpa.ParseSchedule(tc.schedule, zone, time.UTC)
			c := &autoscalingv1alpha1.CronFederatedHPA{
				ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "shop"},
				Spec: autoscalingv1alpha1.CronFederatedHPASpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
					Rules:          []autoscalingv1alpha1.CronFederatedHPARule{{Name: "r", Schedule: tc.schedule, TimeZone: zone}},
				},
			}
			webhookErrs := admission.CronFederatedHPAValidator().Validate(c)
			rule := "- {name: r, schedule: '" + tc.schedule + "', targetReplicas: 1"
			if tc.timeZone != "" {
				rule += ", timeZone: " + tc.timeZone
			}
			objs, report := convertString(t, cronFHPA("scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\nrules:\n"+rule+"}"))
			converted := len(objs) == 1
			if (ctrlErr != nil) != tc.refused || (len(webhookErrs) > 0) != tc.refused || converted == tc.refused {
				t.Errorf("want refused %v: the controller says %v, the webhook %v, the converter wrote %v (%+v)",
					tc.refused, ctrlErr, webhookErrs, converted, report.Entries)
			}
		})
	}
}

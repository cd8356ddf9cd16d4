package convert

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	// Time zones are checked against the database Go embeds, as Karmada's
	// webhook checks them, so that the verdict does not depend on the
	// zone files of the machine the converter runs on.

	"k8s.io/apimachinery/pkg/runtime/schema"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/cronschedule"
	"github.com/shepherd-io/shepherd/pkg/jsonpointer"
)

// This file converts FederatedHPA and CronFederatedHPA: the rows of
// docs/autoscaling.md's "Coming from Karmada" table. Both kinds have
// Karmada's fields; the rules cover where Shepherd reads a value another
// way (a metric target's type, an Object metric's Value target, External
// metrics, which no member can tell its share of), where
// it refuses what Karmada accepted (a utilization above 100%, a second
// FederatedHPA on one target, a schedule Karmada's own controller could
// not run), and Karmada's group in a CronFederatedHPA's target.

// Groups of the autoscaling kinds.
const (
	KarmadaAutoscalingGroup  = "autoscaling.karmada.io"
	ShepherdAutoscalingGroup = autoscalingv1alpha1.GroupName
)

// Kinds of the autoscaling group.
const (
	kindFederatedHPA     = "FederatedHPA"
	kindCronFederatedHPA = "CronFederatedHPA"
)

func init() {
	register(kindFederatedHPA, kind{
		karmada: KarmadaAutoscalingGroup, shepherd: ShepherdAutoscalingGroup, namespaced: true,
		typ:    reflect.TypeFor[autoscalingv1alpha1.FederatedHPA](),
		decode: decoder[autoscalingv1alpha1.FederatedHPA](),
		rules:  federatedHPARules,
		claim:  federatedHPATarget,
	})
	register(kindCronFederatedHPA, kind{
		karmada: KarmadaAutoscalingGroup, shepherd: ShepherdAutoscalingGroup, namespaced: true,
		typ:    reflect.TypeFor[autoscalingv1alpha1.CronFederatedHPA](),
		decode: decoder[autoscalingv1alpha1.CronFederatedHPA](),
		rules:  cronFederatedHPARules,
	})
}

func federatedHPARules(o *object) {
	spec := nested(o.obj, "spec")
	for i, m := range list(spec, "metrics") {
		metric, _ := m.(map[string]any)
		if metric == nil {
			continue
		}
		path := fmt.Sprintf("spec.metrics[%d]", i)
		switch typ := str(metric, "type"); typ {
		case "Resource", "ContainerResource":
			source := strings.ToLower(typ[:1]) + typ[1:]
			metricTargetRules(o, nested(metric, source, "target"), path+"."+source+".target")
		case "Object":
			if str(nested(metric, "object", "target"), "type") == "Value" {
				o.note(path+".object.target", "fhpa-object-value",
					"an Object metric with a Value target: Karmada adds up the described object's values in every member and compares the sum with the target; Shepherd compares each member's own value with the target (weighed by its ready pods): set the target to what each member's object should measure (a target written for the sum, divided by the number of members the object is in)")
			}
		case "External":
			o.note(path, "fhpa-metric-not-read",
				"an External metric, which Karmada refuses: Shepherd accepts it but does not read it (it describes something outside the clusters, so no member's value is its share of the load; the FederatedHPA's ScalingActive condition says so), so it does not scale the workload; scale on a Pods or Object metric the members serve")
		}
	}
}

// metricTargetRules applies to the target of a Resource or ContainerResource
// metric.
func metricTargetRules(o *object, t map[string]any, path string) {
	if t == nil {
		return
	}
	_, hasUtilization := t["averageUtilization"]
	_, hasValue := t["averageValue"]
	// Karmada, as a HorizontalPodAutoscaler, reads whichever of the two is
	// set; Shepherd reads the one the type names.
	want, set := "", ""
	switch typ := str(t, "type"); {
	case hasValue && !hasUtilization && typ != "AverageValue":
		want, set = "AverageValue", "averageValue"
	case hasUtilization && !hasValue && typ != "Utilization":
		want, set = "Utilization", "averageUtilization"
	}
	if want != "" {
		o.note(path+".type", "fhpa-target-type",
			"%q beside %s: Karmada, as a HorizontalPodAutoscaler, reads whichever of averageUtilization and averageValue is set, whatever the type says; Shepherd reads the one the type names: written as %s",
			str(t, "type"), set, want)
		t["type"] = want
	}
	if u, ok := jsonpointer.Integer(t["averageUtilization"]); ok && u > 100 {
		o.note(path+".averageUtilization", "fhpa-utilization-above-100",
			"%d%%: Karmada accepts a utilization above 100%% of the pods' requests, Shepherd refuses it: lower it to 100 at most, or raise the pods' requests, or target an averageValue", u)
	}
}

// federatedHPATarget is what a FederatedHPA scales, as the hub's webhook
// compares targets: namespace, group, kind and name.
func federatedHPATarget(o *object) (key, field, what string) {
	ref := nested(o.obj, "spec", "scaleTargetRef")
	if ref == nil || str(ref, "name") == "" {
		return "", "", ""
	}
	gv, err := schema.ParseGroupVersion(str(ref, "apiVersion"))
	if err != nil {
		return "", "", ""
	}
	key = strings.Join([]string{o.namespace(), gv.Group, str(ref, "kind"), str(ref, "name")}, "/")
	return key, "spec.scaleTargetRef", str(ref, "kind") + " " + objectName(o.namespace(), str(ref, "name"))
}

func cronFederatedHPARules(o *object) {
	spec := nested(o.obj, "spec")
	if ref := nested(spec, "scaleTargetRef"); ref != nil && str(ref, "kind") == kindFederatedHPA {
		if gv, err := schema.ParseGroupVersion(str(ref, "apiVersion")); err == nil && gv.Group == KarmadaAutoscalingGroup {
			ref["apiVersion"] = ShepherdAutoscalingGroup + "/" + version
			o.note("spec.scaleTargetRef.apiVersion", "cron-target-group",
				"names a FederatedHPA of Karmada's group: written as Shepherd's (%s/%s), the FederatedHPA this conversion writes (Shepherd reads Karmada's group the same way)", ShepherdAutoscalingGroup, version)
		}
	}
	for i, r := range list(spec, "rules") {
		rule, _ := r.(map[string]any)
		if rule == nil {
			continue
		}
		path := fmt.Sprintf("spec.rules[%d]", i)
		if s, ok := rule["schedule"].(string); ok {
			if _, err := cronschedule.Parse(s); err != nil {
				o.note(path+".schedule", "cron-schedule",
					"%q: %v. Shepherd's webhook refuses it, and Karmada's controller could not run it either (it reads schedules as Shepherd does; only Karmada's webhook is looser)", s, err)
			}
		}
		if z, ok := rule["timeZone"].(string); ok && z != "" {
			if _, err := cronschedule.Zone(z, time.UTC); err != nil {
				o.note(path+".timeZone", "cron-time-zone",
					"%q: %v. Shepherd's webhook refuses it, as Karmada's does", z, err)
			}
		}
	}
}

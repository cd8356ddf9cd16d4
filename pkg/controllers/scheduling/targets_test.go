package scheduling

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

const (
	sched = workv1alpha1.TargetScheduled
	bound = workv1alpha1.TargetBound
	unsch = workv1alpha1.TargetUnscheduled
)

func tc(name string, replicas int32, state workv1alpha1.TargetState) workv1alpha1.TargetCluster {
	return workv1alpha1.TargetCluster{Name: name, Replicas: replicas, State: state}
}

func TestMergeTargets(t *testing.T) {
	tests := []struct {
		name     string
		current  []workv1alpha1.TargetCluster
		placed   []workv1alpha1.TargetCluster
		additive bool
		want     []workv1alpha1.TargetCluster
	}{
		{name: "first placement",
			placed: []workv1alpha1.TargetCluster{tc("b", 2, ""), tc("a", 1, "")},
			want:   []workv1alpha1.TargetCluster{tc("a", 1, sched), tc("b", 2, sched)}},
		{name: "scale keeps states",
			current: []workv1alpha1.TargetCluster{tc("a", 3, bound), tc("b", 3, "")},
			placed:  []workv1alpha1.TargetCluster{tc("a", 5, ""), tc("b", 4, "")},
			want:    []workv1alpha1.TargetCluster{tc("a", 5, bound), tc("b", 4, "")}},
		{name: "leaving targets become unscheduled with their replicas",
			current: []workv1alpha1.TargetCluster{tc("a", 3, bound), tc("b", 3, bound)},
			placed:  []workv1alpha1.TargetCluster{tc("a", 6, "")},
			want:    []workv1alpha1.TargetCluster{tc("a", 6, bound), tc("b", 3, unsch)}},
		{name: "unscheduled picked again is scheduled",
			current: []workv1alpha1.TargetCluster{tc("a", 6, bound), tc("b", 3, unsch)},
			placed:  []workv1alpha1.TargetCluster{tc("a", 3, ""), tc("b", 3, "")},
			want:    []workv1alpha1.TargetCluster{tc("a", 3, bound), tc("b", 3, sched)}},
		{name: "unscheduled not picked stays",
			current: []workv1alpha1.TargetCluster{tc("a", 6, bound), tc("b", 3, unsch)},
			placed:  []workv1alpha1.TargetCluster{tc("c", 6, "")},
			want:    []workv1alpha1.TargetCluster{tc("a", 6, unsch), tc("b", 3, unsch), tc("c", 6, sched)}},
		{name: "additive only adds",
			current:  []workv1alpha1.TargetCluster{tc("a", 2, bound), tc("b", 2, bound), tc("old", 2, unsch)},
			placed:   []workv1alpha1.TargetCluster{tc("a", 2, ""), tc("c", 2, "")},
			additive: true,
			want:     []workv1alpha1.TargetCluster{tc("a", 2, bound), tc("b", 2, bound), tc("c", 2, sched), tc("old", 2, unsch)}},
		{name: "additive with nothing new changes nothing",
			current:  []workv1alpha1.TargetCluster{tc("a", 2, bound)},
			placed:   []workv1alpha1.TargetCluster{tc("a", 2, "")},
			additive: true,
			want:     []workv1alpha1.TargetCluster{tc("a", 2, bound)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.current)
			got := MergeTargets(tt.current, tt.placed, tt.additive)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("MergeTargets =\n%v\nwant\n%v", got, tt.want)
			}
			if !reflect.DeepEqual(before, tt.current) {
				t.Fatal("MergeTargets modified its input")
			}
		})
	}
}

func TestDescribeTargets(t *testing.T) {
	if got := describeTargets([]workv1alpha1.TargetCluster{tc("a", 1, bound), tc("b", 2, unsch)}, nil); got != "a:1" {
		t.Errorf("describeTargets = %q", got)
	}
	if got := describeTargets(nil, nil); got != "no cluster" {
		t.Errorf("describeTargets(nil) = %q", got)
	}
	many := make([]workv1alpha1.TargetCluster, 20)
	for i := range many {
		many[i] = tc(strings.Repeat("c", i+1), 1, "")
	}
	if got := describeTargets(many, nil); !strings.HasSuffix(got, "and 4 more") {
		t.Errorf("describeTargets(20 targets) = %q", got)
	}
	divided := []workv1alpha1.TargetCluster{
		{Name: "a", Components: []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 3}}},
		{Name: "b", Components: []workv1alpha1.TargetComponent{{Name: "workers", Replicas: 2}}},
	}
	if got := describeTargets(divided, &workv1alpha1.DividedComponents{HeadCluster: "a"}); got != "a (head):head=1,workers=3, b:workers=2" {
		t.Errorf("describeTargets(divided) = %q", got)
	}
}

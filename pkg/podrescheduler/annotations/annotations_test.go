package annotations

import (
	"reflect"
	"testing"
)

func TestRead(t *testing.T) {
	tests := []struct {
		name    string
		ann     map[string]string
		want    State
		ok      bool
		wantErr bool
	}{
		{name: "not opted in", ann: map[string]string{"x": "y"}},
		{name: "fresh", ann: map[string]string{SchedulingRetries: "2"}, want: State{Retries: 2}, ok: true},
		{
			name: "with history",
			ann: map[string]string{SchedulingRetries: " 3 ", ReschedulingCount: "1",
				ScheduledNodes: "a, b,,", FailedPods: "u1"},
			want: State{Retries: 3, Count: 1, Nodes: []string{"a", "b"}, FailedPods: []string{"u1"}},
			ok:   true,
		},
		{name: "zero retries", ann: map[string]string{SchedulingRetries: "0"}, ok: true, wantErr: true},
		{name: "too many retries", ann: map[string]string{SchedulingRetries: "51"}, ok: true, wantErr: true},
		{name: "not a number", ann: map[string]string{SchedulingRetries: "two"}, ok: true, wantErr: true},
		{name: "bad count", ann: map[string]string{SchedulingRetries: "2", ReschedulingCount: "-1"}, ok: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := Read(tt.ann)
			if (err != nil) != tt.wantErr || ok != tt.ok {
				t.Fatalf("Read() ok=%v err=%v, want ok=%v err=%v", ok, err, tt.ok, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Read() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRecordAndWrite(t *testing.T) {
	s := State{Retries: 2}
	s = s.Record("a", "u1")
	s = s.Record("a", "u2") // same node again: listed once
	if s.Exhausted() {
		t.Fatalf("exhausted after %d of %d", s.Count, s.Retries)
	}
	s = s.Record("b", "u3")
	if !s.Exhausted() {
		t.Fatalf("not exhausted after %d of %d", s.Count, s.Retries)
	}
	ann := map[string]string{}
	s.Write(ann)
	want := map[string]string{SchedulingRetries: "2", ReschedulingCount: "3", ScheduledNodes: "a,b", FailedPods: "u1,u2,u3"}
	if !reflect.DeepEqual(ann, want) {
		t.Errorf("Write() = %v, want %v", ann, want)
	}
	back, _, err := Read(ann)
	if err != nil || !reflect.DeepEqual(back, s) {
		t.Errorf("Read(Write(s)) = %+v, %v; want %+v", back, err, s)
	}
}

package framework

// Verdict rejects the clusters of a set with one status.
type Verdict struct {
	Reject ClusterSet
	Status *Status
}

// Verdicts are a filter's decisions over the whole fleet, in order: a
// cluster gets the status of the first verdict rejecting it.
type Verdicts []Verdict

// Filter is the per-cluster reading of the verdicts: the status of the
// first verdict rejecting ci, nil when none does.
func (v Verdicts) Filter(ci *ClusterInfo) *Status {
	for i := range v {
		if v[i].Reject.Has(ci.index) {
			return v[i].Status
		}
	}
	return nil
}

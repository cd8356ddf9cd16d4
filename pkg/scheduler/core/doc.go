// Package core holds Shepherd's placement algorithms as pure functions over
// plain data: selecting clusters under spread constraints and assigning
// replicas to them. It knows nothing of plugins, the API server or clocks, so
// it can be tested and fuzzed alone. The framework (pkg/scheduler/framework)
// turns clusters into Candidates (filter, score, normalize) and calls Schedule.
//
// # Steps
//
// Schedule runs the last two of the four steps of the design (filter, score,
// select, assign):
//
//  1. Plan: pick the strategy (StrategyName), drop candidates that cannot
//     take part (static weight 0 when some cluster has a weight; no room for
//     capacity strategies), turn spread constraints into rules, and reject
//     at once, naming the constraint, what no search can fix: too few groups
//     for a minGroups, a minGroups above a finer maxGroups, replicas that do
//     not fit in the clusters or in the largest maxGroups groups.
//  2. Select: choose the clusters (search.go).
//  3. Assign: the strategy divides the replicas (strategy.go and one
//     assign_*.go file per strategy, listed in strategyTable).
//  4. Finish: give every selected cluster of a spread Divided placement a
//     replica, check the strategy's output (sum, capacity, spread on the
//     clusters that actually receive replicas), and explain every candidate
//     left out.
//
// # Capacity
//
// A cluster's capacity for the workload is Available + Previous: Available
// is what still fits beside the replicas already there. No strategy exceeds
// it; a Steady scale-up adds at most Available. Static weights do not use
// capacity to choose clusters (the weights say where replicas go), but a
// share beyond it is Unschedulable rather than pending pods (Karmada does
// not check).
//
// # Groups
//
// Clusters group provider -> region -> zone -> cluster, regions and zones
// keyed by their whole path (a region name under two providers is two
// regions), and by label value for spreadByLabel. A missing value forms the
// "" group under its parent and counts as a group. A group's score is its
// best cluster's score, ties by name: a spread placement needs one good
// cluster per group, and a sum would favour big groups for their size.
//
// # Selection
//
// Candidates are walked best first: in Steady mode held clusters first, then
// score, capacity and name. A depth-first search takes each cluster that is
// wanted and keeps the set completable (maxGroups hold; each minGroups can
// still be reached with the clusters allowed and the groups left; the
// replicas can still fit), and backtracks to the last cluster taken when the
// set cannot be completed. The first set found is therefore the best one in
// that order; since a group's score is its best cluster's, groups are opened
// in score order, top-down, without enumerating group combinations.
//
//   - Duplicated and equal weights take every cluster the constraints allow
//     (all of them without constraints: PickAll; the best N with a cluster
//     constraint minGroups = maxGroups = N: PickN).
//   - Dynamic weights take clusters until they fit the replicas and meet
//     every minimum; Aggregated does the same with the fewest clusters,
//     trying set sizes upward from a lower bound.
//   - Static weight lists ignore spread constraints and take every
//     weighted cluster.
//   - Divided placements never take more clusters than replicas, and a
//     minGroups above the replicas counts as the replicas: one replica per
//     group.
//   - Steady mode keeps held clusters while the constraints allow, so
//     raising N only adds clusters and lowering N drops the lowest-scored.
//
// Cost, for n candidates: grouping reads each cluster once (one hash of its
// topology tuple, plus one per label rule) and derives every level from the
// few distinct tuples; the order finds the best 64 in one pass and heapifies
// the rest only if the search goes past them; each search step is O(rules),
// and a selection stops after 8192 + 8n steps in all, failing with an error
// that says so (the pre-checks and capacity bounds make that rare). Memory
// is O(n), a constant number of allocations. Sorting by name is linear when
// candidates come sorted, as the framework passes them.
//
// # Assignment
//
// Shares are divided by Karmada's method, the Webster divisor method
// (package apportion), and sum exactly to the replicas; equal claims go to
// the cluster with fewer replicas, then by name in the direction
// apportion.TiesFor draws from the template UID. Static weights are recomputed from the weights
// every time: a ratio, not a history. For dynamic weights and Aggregated in
// Steady mode with replicas in place, an unchanged total keeps the previous
// replicas exactly, a larger one adds only the new replicas (by free room),
// and a smaller one shrinks the previous replicas in proportion (Aggregated:
// keeping the clusters that hold most, as few as hold the new total). Fresh
// mode recomputes from scratch. The tables of Karmada's assignment tests
// run as TestKarmadaAssignmentParity.
//
// # Guarantees
//
// Fuzzed (FuzzSchedule, FuzzSteadyScale; FuzzWebster in package apportion):
// Divided targets sum to the replicas and have at least one each; every
// target is a candidate; targets fit; spread constraints hold on the
// targets; every candidate is a target or explained; the result does not
// depend on candidate order; a Steady run with the previous result in place
// returns it unchanged; without spread constraints a scale by d changes
// exactly d replicas and an Aggregated scale-down ends on as few clusters
// as hold the new total; the division equals the one-replica-at-a-time
// definition and is house-monotone. Ties always break by a rule; nothing
// iterates a map.
package core

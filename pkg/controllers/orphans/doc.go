// Package orphans sweeps each member for objects that Shepherd applied and
// that no Work claims any longer, and removes them: the invariant that a
// deleted template leaves no copy behind, held whatever failed on the way
// (a hub restart, a lost status write, a fenced leader's late write, a
// member cut while the delete went out).
//
// An object is Shepherd's when its annotation work.shepherd.io/work names
// a Work; it is an orphan when that Work is in this cluster's execution
// namespace and the hub, asked directly (not a cache), has no such Work,
// in two sweeps in a row with the object unchanged (same UID and
// resourceVersion). It is then deleted with both as preconditions, so an
// object that was taken over, edited or replaced since it was read is
// left alone. Nothing else is ever touched: an object named like a
// template, or labelled by someone else, carries no such annotation.
//
// decide.go is pure and table-tested; reconciler.go reads and deletes;
// setup.go wires it.
package orphans

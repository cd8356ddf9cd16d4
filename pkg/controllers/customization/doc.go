// Package customization runs the two controllers that teach the process's
// interpreter at run time, one implementation (Reconciler) over two CRDs:
//
//   - interpreter-customization (ControllerName):
//     ResourceInterpreterCustomizations become the interpreter's
//     customization layer (Layered.SetCustom); conditions Compiled,
//     KindFound and Active.
//   - health-interpreter (HealthControllerName): HealthInterpreters become
//     its health rules, the top layer (Layered.SetHealthRule); conditions
//     Compiled and Active.
//
// Both run on the hub and in each Pull cluster's agent, which applies the
// objects read-only (the hub's controller manager reports on them).
//
// # What it decides (elect.go, pure)
//
// Several objects may target one kind: Elect picks, the same way for both
// CRDs, the first by name among those that compiled and are not being
// deleted, and says why the others are not in use.
//
// # What it writes (reconciler.go)
//
// Each event recomputes the whole (small) set: every object is compiled
// (package interpreter: CompileCustomization, CompileHealthInterpreter,
// the checks the admission webhook serves too), cached by generation; the
// winners are installed in the interpreter and the kinds served by nothing
// any more cleared, so the layer below applies again. Conditions as above
// and events CompileError, KindNotFound and Activated.
package customization

// Package dashboard serves Shepherd's web dashboard: the fleet as a
// picture, every workload and why it is where it is, the multi-cluster
// Services, the autoscalers and their replica history, failover and
// rescheduling with their actions, and a what-if planner.
//
// Guarantees, each enforced by a test:
//
//   - One watch for all browser tabs. The server reads the hub through one
//     informer cache (Clusters, bindings, Works, RescheduleTasks, events,
//     ExportedServices, FederatedHPAs, CronFederatedHPAs); every page
//     renders from it, and keeps nothing of its own (a replica history is
//     read from events and CronFederatedHPA statuses). A change in the cache
//     is pushed to open tabs as a server-sent event, and a tab then
//     reloads its page from this server, never from the hub: no tab polls
//     the hub.
//   - Actions use the user's identity. Confirm and Reschedule are sent to
//     the hub with the user's bearer token when one was given, else with
//     the kubeconfig the dashboard was started with (which, on loopback, is
//     the user's own). Beyond loopback a token is required for every page,
//     and it is checked against the hub (a SelfSubjectAccessReview) before
//     anything is shown; the hub's RBAC decides what it may do.
//   - Every action is a POST carrying a CSRF token that matches the
//     browser's cookie; a POST from another origin is refused. Without
//     tokens (on loopback) a request must name this machine as its Host,
//     so a site pointed at 127.0.0.1 (DNS rebinding) gets nothing. Cookies
//     are named per port. With read-only mode there are no actions at all.
//   - An event is shown on an object only when it was recorded in the
//     object's namespace (a Work's execution namespace; default or
//     kube-system for a cluster-scoped object): the API server lets anyone
//     who may create events somewhere name any object, and an event's
//     reportingController is its writer's choice, so it is not trusted.
//   - No Secret's content is ever rendered: Works are cached without their
//     manifests, and only conditions and names are shown. (A what-if reads
//     the templates its policy selects, with the user's identity, and
//     renders none of their content.)
//
// The pages are Go templates and one small script, embedded in the binary:
// no frontend build is needed to run or test it.
package dashboard

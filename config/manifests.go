// Package config embeds the manifests that install Shepherd's controller
// manager into a hub, so that `shepherd install` applies, without a
// checkout, exactly what `kubectl apply -k config/default` does: package
// install reads default/kustomization.yaml from Manifests and follows its
// resources, as kustomize would.
package config

import "embed"

// Manifests holds the kustomizations and every file they list. A file a
// kustomization lists but this pattern misses makes package install fail
// with its name (and a test fails first).
//
//go:embed default/*.yaml crd/kustomization.yaml crd/bases/*.yaml crd/mcs/*.yaml rbac/*.yaml manager/*.yaml controllermanager/*.yaml agent/*.yaml pull/*.yaml admission/*.yaml flowcontrol/*.yaml
var Manifests embed.FS

// DefaultKustomization is the directory of Manifests that installs
// everything.
const DefaultKustomization = "default"

// PullKustomization is the directory of Manifests with the hub-side guard
// of Pull clusters' agents (part of DefaultKustomization too).
const PullKustomization = "pull"

// IdentityKustomizations are the directories of Manifests (all part of
// DefaultKustomization) that give the controller manager its identity on
// the hub, its rights, the priority levels of its requests, and the
// admission policies that keep its objects its own (bindings only it may
// redirect): what `shepherd up` applies to run it as it runs installed.
var IdentityKustomizations = []string{"rbac", "flowcontrol", "admission"}

// AgentKustomization is the directory of Manifests that runs the agent of
// a Pull cluster in the member (`shepherd register --deploy`).
const AgentKustomization = "agent"

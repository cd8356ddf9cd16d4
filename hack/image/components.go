package main

// component is one image: a static binary of the module, run as the
// image's entrypoint.
type component struct {
	// Name is the image's repository name under the registry
	// (ghcr.io/shepherd-io/<Name>) and the binary's path in the image
	// (/<Name>).
	Name string
	// Command is the package built, then the arguments the entrypoint
	// always passes it: the Deployments' args are only flags. The
	// controller manager and the agent are their lean binaries
	// (cmd/shepherd-controller-manager, cmd/shepherd-agent), which link
	// no embedded control plane, kube-scheduler or kwok.
	Command []string
	// Description is the image's org.opencontainers.image.description.
	Description string
	// Ports are the image's exposed TCP ports (documentation for
	// `docker inspect`; the manifests declare their own).
	Ports []int
	// BudgetMiB is the most the image may weigh compressed (its one
	// layer and config, as a registry stores it): docs/install.md states
	// the same numbers and the test holds the images to them.
	BudgetMiB int
}

// components are the images `make image` builds, in build order.
var components = []component{
	{
		Name:        "shepherd-controller-manager",
		Command:     []string{"./cmd/shepherd-controller-manager"},
		Description: "Shepherd's controller manager, run in the hub cluster",
		Ports:       []int{8080, 8081, 9443},
		BudgetMiB:   16,
	},
	{
		Name:        "shepherd-agent",
		Command:     []string{"./cmd/shepherd-agent"},
		Description: "Shepherd's agent, run in a Pull member cluster",
		Ports:       []int{8080, 8081},
		BudgetMiB:   16,
	},
	{
		Name:        "shepherd",
		Command:     []string{"./cmd/shepherd"},
		Description: "The shepherd command: the in-hub dashboard, the pod rescheduler, every CLI command",
		Ports:       nil,
		BudgetMiB:   40,
	},
}

// User is the numeric user and group every image runs as: not root, and
// the same as distroless's nonroot, so runAsNonRoot holds without a name
// lookup.
const User = "65532:65532"

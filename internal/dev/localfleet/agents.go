package localfleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/membership"
)

// AgentKubeconfigPath is where the agent credentials of Pull member name
// are written: what `shepherd register` would print.
func AgentKubeconfigPath(dataDir, name string) string {
	return filepath.Join(dataDir, "members", name+".agent.kubeconfig")
}

// registerPull registers a Pull member (new credentials on every start of
// the fleet) and returns the agent's hub configuration.
func registerPull(ctx context.Context, hubCfg *rest.Config, hub client.Client, dataDir string, spec simmember.MemberSpec, m *simmember.Member) (*rest.Config, error) {
	kc, err := kubernetes.NewForConfig(m.RestConfig())
	if err != nil {
		return nil, err
	}
	id, err := clusterclient.Identity(ctx, kc)
	if err != nil {
		return nil, fmt.Errorf("reading the member's identity: %w", err)
	}
	reg, err := membership.Register(ctx, hubCfg, hub, membership.RegisterOptions{
		Name: spec.Name, Provider: spec.Provider, Region: spec.Region, Zone: spec.Zone, Labels: spec.Labels,
		ID: id, Force: true,
	})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(AgentKubeconfigPath(dataDir, spec.Name), reg.Kubeconfig, 0o600); err != nil {
		return nil, err
	}
	return clientcmd.RESTConfigFromKubeConfig(reg.Kubeconfig)
}

// runningAgent is one in-process agent.
type runningAgent struct {
	hubCfg, memberCfg *rest.Config
	cancel            context.CancelFunc
	done              chan struct{}
}

// startAgents runs an agent for each Pull member.
func (f *Fleet) startAgents(ctx context.Context, opts Options, pulls map[string]*rest.Config, log logr.Logger) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.agents = map[string]*runningAgent{}
	f.agentCtx, f.agentLog = ctx, log
	for i, spec := range opts.Fleet.Members {
		cfg, ok := pulls[spec.Name]
		if !ok {
			continue
		}
		o := opts.Agent
		o.Cluster = spec.Name
		o.Identity = spec.Name + "-agent"
		a := &runningAgent{hubCfg: cfg, memberCfg: f.Members[i].RestConfig()}
		f.agents[spec.Name] = a
		a.start(ctx, o, log.WithName("agent").WithValues("cluster", spec.Name))
	}
}

func (a *runningAgent) start(ctx context.Context, o agent.Options, log logr.Logger) {
	ctx, a.cancel = context.WithCancel(ctx)
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		if err := agent.Run(ctx, a.hubCfg, a.memberCfg, o, log); err != nil {
			log.Error(err, "the agent cannot serve its cluster")
		}
	}()
}

// StopAgent stops the agent of Pull member name (it releases its Lease)
// and waits for it; StartAgent starts it again.
func (f *Fleet) StopAgent(name string) error {
	f.mu.Lock()
	a, ok := f.agents[name]
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("no agent for member %q: it is not a Pull member", name)
	}
	a.cancel()
	<-a.done
	return nil
}

// StartAgent starts the stopped agent of Pull member name, with opts (its
// Cluster and Identity are set here).
func (f *Fleet) StartAgent(name string, opts agent.Options) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.agents[name]
	if !ok {
		return fmt.Errorf("no agent for member %q: it is not a Pull member", name)
	}
	select {
	case <-a.done:
	default:
		return fmt.Errorf("the agent of member %q is running", name)
	}
	opts.Cluster, opts.Identity = name, name+"-agent"
	a.start(f.agentCtx, opts, f.agentLog.WithName("agent").WithValues("cluster", name))
	return nil
}

// AgentHubConfig is a copy of the hub configuration the agent of Pull
// member name runs with; nil for another member.
func (f *Fleet) AgentHubConfig(name string) *rest.Config {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.agents[name]; ok {
		return rest.CopyConfig(a.hubCfg)
	}
	return nil
}

// SetAgentCredentials restarts the agent of Pull member name with the hub
// kubeconfig a registration issued (after `shepherd register --force`,
// which revokes the ones it ran with).
func (f *Fleet) SetAgentCredentials(name string, kubeconfig []byte, opts agent.Options) error {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return err
	}
	if err := f.StopAgent(name); err != nil {
		return err
	}
	f.mu.Lock()
	f.agents[name].hubCfg = cfg
	f.mu.Unlock()
	return f.StartAgent(name, opts)
}

// waitAgents waits for every agent to stop.
func (f *Fleet) waitAgents() {
	f.mu.Lock()
	agents := make([]*runningAgent, 0, len(f.agents))
	for _, a := range f.agents {
		agents = append(agents, a)
	}
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() { defer wg.Done(); <-a.done }()
	}
	wg.Wait()
}

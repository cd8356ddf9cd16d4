package component

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/pkg/agent"
)

// TestAgentTokenStore: where renewed tokens go, and --hub-kubeconfig-secret
// refused naming the flag and the form it wants.
func TestAgentTokenStore(t *testing.T) {
	member := &rest.Config{Host: "https://member.example"}
	for _, tt := range []struct {
		secret  string
		want    any
		wantErr string
	}{
		{secret: "", want: agent.FileTokenStore{Path: "hub.kubeconfig"}},
		{secret: "shepherd-agent/shepherd-agent-hub", want: agent.SecretTokenStore{}},
		{secret: "shepherd-agent-hub", wantErr: `--hub-kubeconfig-secret "shepherd-agent-hub": want NAMESPACE/NAME`},
		{secret: "/shepherd-agent-hub", wantErr: "want NAMESPACE/NAME"},
		{secret: "shepherd-agent/", wantErr: "want NAMESPACE/NAME"},
		{secret: "a/b/c", wantErr: "want NAMESPACE/NAME"},
	} {
		t.Run(tt.secret, func(t *testing.T) {
			got, err := tokenStore("hub.kubeconfig", tt.secret, member)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch want := tt.want.(type) {
			case agent.FileTokenStore:
				if got != want {
					t.Errorf("got %#v, want %#v", got, want)
				}
			case agent.SecretTokenStore:
				s, ok := got.(agent.SecretTokenStore)
				if !ok || s.Namespace != "shepherd-agent" || s.Name != "shepherd-agent-hub" || s.Member == nil {
					t.Errorf("got %#v, want the Secret shepherd-agent/shepherd-agent-hub", got)
				}
			}
		})
	}
}

package membership

import (
	"context"
	"strings"
	"testing"
)

// TestJoinRefusesBadOptions: options that contradict each other are
// refused before anything is contacted (a nil hub client would panic).
func TestJoinRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts JoinOptions
		want string
	}{
		{"unknown credentials", JoinOptions{Name: "m1", Credentials: "token"}, `--credentials "token": use service-account or kubeconfig`},
		{"rbac propagation with stored kubeconfig", JoinOptions{Name: "m1", Credentials: CredentialsKubeconfig, AllowRBACPropagation: true},
			"--allow-rbac-propagation grants the hub's ServiceAccount in the member; with --credentials kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Join(context.Background(), nil, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// Package browserenv drives headless Chromium for the dashboard's browser
// tests and benchmarks: it finds the browser, starts it with the flags a
// closed network needs, and saves screenshots.
package browserenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium finds the browser: $CHROMIUM, else chromium, chromium-browser
// or google-chrome on the PATH.
func Chromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: install it (Debian: apt-get install chromium) or set $CHROMIUM; .ci/run installs it")
}

// Start starts a headless browser; its tabs are children of the returned
// context. Cancel stops it.
func Start(parent context.Context) (context.Context, context.CancelFunc, error) {
	exe, err := Chromium()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "shepherd-chromium-")
	if err != nil {
		return nil, nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 900),
		// a closed network: no background connections, no updates, no sync.
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil {
		cancelBrowser()
		cancelAlloc()
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	return bctx, func() { cancelBrowser(); cancelAlloc(); os.RemoveAll(dir) }, nil
}

// Tab opens a new tab of the browser for t, closed at the end of the test,
// in a browser context of its own: its cookies (a signed-in token) are its
// own. When the test fails, the tab's last screen is saved as an artifact.
func Tab(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil { // opens the tab, before any timeout
		cancel()
		t.Fatalf("opening a tab: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	t.Cleanup(func() {
		if t.Failed() {
			path := filepath.Join(ArtifactDir(), strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+".png")
			if err := Screenshot(ctx, path); err == nil {
				t.Logf("screenshot of the failure: %s", path)
			}
		}
		cancelTimeout()
		cancel()
	})
	return ctx
}

// ArtifactDir is where failure screenshots go: $SHEPHERD_TEST_ARTIFACTS, or
// shepherd-browser-artifacts in the temporary directory.
func ArtifactDir() string {
	if d := os.Getenv("SHEPHERD_TEST_ARTIFACTS"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "shepherd-browser-artifacts")
}

// Screenshot saves the tab's whole page as PNG (quality 100 is PNG).
func Screenshot(ctx context.Context, path string) error {
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}

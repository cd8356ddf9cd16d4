package dashboard

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// pages are the parsed templates, one set per page.
type pages struct {
	sets map[string]*template.Template
}

var pageNames = []string{"fleet", "workloads", "workload", "services", "autoscalers", "autoscaler", "failover", "whatif", "login", "error"}

func loadPages() (*pages, error) {
	p := &pages{sets: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "assets/templates/layout.html", "assets/templates/evictions.html", "assets/templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard template %s: %w", name, err)
		}
		p.sets[name] = t
	}
	return p, nil
}

// pageData is what the layout renders around a page.
type pageData struct {
	Title    string
	Active   string
	CSRF     string
	ReadOnly bool
	SignedIn bool
	Flash    string
	Error    string
	View     any
}

// render writes v's page, or only its live region when the request is a
// live reload (header X-Shepherd-Fragment).
func (s *Server) render(w http.ResponseWriter, r *http.Request, v view) {
	d := pageData{
		Title: v.title, Active: v.page, CSRF: csrfToken(w, r), ReadOnly: s.opts.ReadOnly,
		SignedIn: tokenOf(r) != "", Error: v.err, View: v.data,
	}
	if f := cookie(r, flashCookie); f != "" && r.Header.Get("X-Shepherd-Fragment") == "" {
		d.Flash, _ = url.QueryUnescape(f)
		setCookie(w, r, flashCookie, "", -1)
	}
	tmpl := "layout"
	if r.Header.Get("X-Shepherd-Fragment") != "" {
		tmpl = "live"
	}
	var buf bytes.Buffer
	if err := s.pages.sets[v.page].ExecuteTemplate(&buf, tmpl, d); err != nil {
		s.opts.Logger.Error(err, "rendering a dashboard page", "page", v.page)
		http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if v.status != 0 {
		w.WriteHeader(v.status)
	}
	_, _ = w.Write(buf.Bytes())
}

var funcs = template.FuncMap{
	"picture": Picture,
	"pct":     func(f float64) string { return strconv.Itoa(int(f*100+0.5)) + "%" },
	"cores": func(milli int64) string {
		return resource.NewMilliQuantity(milli, resource.DecimalSI).String() + " cores"
	},
	"bytes": func(b int64) string {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	},
	"barwidth": func(share float64) template.CSS {
		return template.CSS(fmt.Sprintf("%.1fem", 0.3+share*11.7))
	},
	"lower":   strings.ToLower,
	"state":   StateClass,
	"healths": func() []string { return Healths },
	"add":     func(a, b int) int { return a + b },
	"plural":  plural,
	"pageURL": func(f Filter, page int) string {
		q := url.Values{}
		for k, v := range map[string]string{"namespace": f.Namespace, "policy": f.Policy, "cluster": f.Cluster, "health": f.Health, "q": f.Query} {
			if v != "" {
				q.Set(k, v)
			}
		}
		q.Set("page", strconv.Itoa(page))
		return "/workloads?" + q.Encode()
	},
	"autoscalersURL": func(page int) string { return "/autoscalers?page=" + strconv.Itoa(page) },
	"clock": func(t any) string {
		switch t := t.(type) {
		case time.Time:
			return t.UTC().Format("2006-01-02 15:04:05Z")
		case *time.Time:
			if t != nil {
				return t.UTC().Format("2006-01-02 15:04:05Z")
			}
		}
		return ""
	},
	"rfc3339": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
}

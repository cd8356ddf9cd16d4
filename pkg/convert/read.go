package convert

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Stdin is the file name that reads standard input, as kubectl's -f -.
const Stdin = "-"

// Document is one object of the input.
type Document struct {
	// Source is the file it was read from ("-" for standard input), or
	// "karmada" for an object listed from a control plane.
	Source string
	// Line is the line of the file where the object's document starts
	// (its first line that is not blank or a comment), 0 when listed.
	Line int
	// Object is the object as written.
	Object map[string]any
}

// Where is FILE:LINE, or the source alone when there is no line.
func (d Document) Where() string { return where(d.Source, d.Line) }

func where(source string, line int) string {
	if line == 0 {
		return source
	}
	return source + ":" + strconv.Itoa(line)
}

// ReadPaths reads every object of the files and directories named (a
// directory's .yaml, .yml and .json files, sorted; below it too with
// recursive). "-" reads stdin. What cannot be read is returned as Failed
// entries naming the file and line; the rest is still read.
func ReadPaths(paths []string, recursive bool, stdin io.Reader) ([]Document, []Entry) {
	var docs []Document
	var errs []Entry
	for _, p := range paths {
		if p == Stdin {
			d, e := Read(Stdin, stdin)
			docs, errs = append(docs, d...), append(errs, e...)
			continue
		}
		files, err := expand(p, recursive)
		if err != nil {
			errs = append(errs, failed(p, 0, err.Error()))
			continue
		}
		for _, f := range files {
			fh, err := os.Open(f)
			if err != nil {
				errs = append(errs, failed(f, 0, err.Error()))
				continue
			}
			d, e := Read(f, fh)
			_ = fh.Close()
			docs, errs = append(docs, d...), append(errs, e...)
		}
	}
	return docs, errs
}

// expand lists the files a path names.
func expand(p string, recursive bool) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(f string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if f != p && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(f); ext == ".yaml" || ext == ".yml" || ext == ".json" {
			files = append(files, f)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// lineOf finds the line number in a YAML parser's message.
var lineOf = regexp.MustCompile(`line (\d+)`)

// Read reads the documents of one multi-document YAML (or JSON) stream,
// named name in messages. Each document is decoded on its own, so that an
// error names the line in the whole file: the parser counts from the
// document's first line, which is added back.
func Read(name string, r io.Reader) ([]Document, []Entry) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, []Entry{failed(name, 0, err.Error())}
	}
	var docs []Document
	var errs []Entry
	for _, c := range split(data) {
		if c.first == 0 {
			continue // only blank lines and comments
		}
		js, err := yaml.YAMLToJSON(c.data)
		if err != nil {
			msg, line := err.Error(), c.first
			if m := lineOf.FindStringSubmatchIndex(msg); m != nil {
				n, _ := strconv.Atoi(msg[m[2]:m[3]])
				line = c.start + n - 1
				msg = msg[:m[0]] + "line " + strconv.Itoa(line) + msg[m[1]:]
			}
			errs = append(errs, failed(name, line, "not valid YAML: "+msg))
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		// Numbers stay as written: float64 would turn 1000000 into 1e+06,
		// which an int32 field refuses.
		dec.UseNumber()
		var obj any
		if err := dec.Decode(&obj); err != nil {
			errs = append(errs, failed(name, c.first, err.Error()))
			continue
		}
		m, ok := obj.(map[string]any)
		if !ok {
			if obj != nil {
				errs = append(errs, failed(name, c.first, fmt.Sprintf("the document is a %T, not an object", obj)))
			}
			continue
		}
		d, e := items(Document{Source: name, Line: c.first, Object: m})
		docs, errs = append(docs, d...), append(errs, e...)
	}
	return docs, errs
}

// items expands a List (kind List or any kind ending in List with items)
// into its objects, which carry the list's line.
func items(d Document) ([]Document, []Entry) {
	kind, _ := d.Object["kind"].(string)
	list, isList := d.Object["items"].([]any)
	if !strings.HasSuffix(kind, "List") || (!isList && d.Object["items"] != nil) {
		if kind == "" || d.Object["apiVersion"] == nil {
			return nil, []Entry{failed(d.Source, d.Line, "the document has no apiVersion or kind")}
		}
		return []Document{d}, nil
	}
	var docs []Document
	var errs []Entry
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			errs = append(errs, failed(d.Source, d.Line, fmt.Sprintf("items[%d] is not an object", i)))
			continue
		}
		ds, es := items(Document{Source: d.Source, Line: d.Line, Object: m})
		docs, errs = append(docs, ds...), append(errs, es...)
	}
	return docs, errs
}

// chunk is one document of a stream: its text, the line it starts at and
// its first line with content (0 for none).
type chunk struct {
	data         []byte
	start, first int
}

// split cuts a stream at its "---" lines.
func split(data []byte) []chunk {
	var out []chunk
	cur := chunk{start: 1}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "---" || strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "---\t") {
			out = append(out, cur)
			cur = chunk{start: n + 1}
			continue
		}
		if t := strings.TrimSpace(line); cur.first == 0 && t != "" && !strings.HasPrefix(t, "#") {
			cur.first = n
		}
		cur.data = append(append(cur.data, line...), '\n')
	}
	return append(out, cur)
}

func failed(source string, line int, msg string) Entry {
	return Entry{Source: where(source, line), Action: Failed, Rule: "unreadable", Message: msg}
}

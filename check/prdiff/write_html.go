package prdiff

import (
	"html/template"
	"io"
)

// writeHTML writes the report as one self-contained HTML file: no script,
// no external style or font, every value escaped by html/template.
func writeHTML(w io.Writer, r Report) error {
	return htmlPage.Execute(w, r)
}

var htmlPage = template.Must(template.New("diff").Funcs(template.FuncMap{
	"lines": diffLines,
	"deny":  func(f Finding) bool { return f.Severity == "deny" },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>tollgate diff</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#1f2328}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.3em .8em;text-align:right}th:first-child,td:first-child{text-align:left}
details{margin:.8em 0;border:1px solid #d0d7de;border-radius:6px;padding:.5em 1em}summary{cursor:pointer}
pre{background:#f6f8fa;padding:.6em;overflow:auto;font-size:13px;line-height:1.35}
.add{color:#116329;background:#dafbe1;display:block}.del{color:#82071e;background:#ffebe9;display:block}.hunk{color:#0550ae;display:block}.file{font-weight:bold;display:block}
.deny{color:#82071e;font-weight:bold}.warn{color:#7d4e00;font-weight:bold}.status{font-weight:bold}
</style>
</head>
<body>
<h1>tollgate diff</h1>
<p>base {{.Base}} → head {{.Head}}</p>
<table>
<tr><th></th><th>added</th><th>removed</th><th>changed</th><th>unchanged</th></tr>
<tr><td>Applications</td><td>{{.Summary.Applications.Added}}</td><td>{{.Summary.Applications.Removed}}</td><td>{{.Summary.Applications.Changed}}</td><td>{{.Summary.Applications.Unchanged}}</td></tr>
<tr><td>Objects</td><td>{{.Summary.Objects.Added}}</td><td>{{.Summary.Objects.Removed}}</td><td>{{.Summary.Objects.Changed}}</td><td>{{.Summary.Objects.Unchanged}}</td></tr>
</table>
<p>{{.Summary.Line}}</p>
{{range .Errors}}<p class="deny">error: {{.}}</p>
{{end}}{{range .Groups}}{{if .Listed}}<details open>
<summary>{{.Kind}} <b>{{.Name}}</b>: {{.Describe}}</summary>
{{if .NotRendered}}<p>Not rendered: {{.NotRendered}}</p>{{end}}
{{range .Objects}}<p><span class="status">{{.Status}}</span> {{.Title}} <code>{{.File}}{{if .Line}}:{{.Line}}{{end}}</code></p>
{{range .Findings}}<p class="{{if deny .}}deny{{else}}warn{{end}}">{{.Label}}: {{.Message}}</p>
{{end}}{{if .Diff}}<pre>{{range lines .Diff}}<span class="{{.Class}}">{{.Text}}</span>
{{end}}</pre>{{end}}
{{end}}</details>
{{end}}{{end}}{{range .BaseErrors}}<p>error at the base: {{.}}</p>
{{end}}{{range .Notes}}<p>note: {{.}}</p>
{{end}}</body>
</html>
`))

<!doctype html>
<link rel="stylesheet" href="style.css">
{{- with nomadVar "nomad/jobs/site" }}
<title>{{ .title }}</title>
<h1>{{ .title }}</h1>
<p>{{ .greeting | html }}</p>
{{- end }}
<p>Allocation {{ env "NOMAD_ALLOC_ID" }}, port {{ env "NOMAD_PORT_http" }}.</p>
<ul>
{{- range nomadService "site" }}
<li>{{ .Address }}:{{ .Port }}</li>
{{- end }}
</ul>

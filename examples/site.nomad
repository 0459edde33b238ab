# Templates (issue 28): a page rendered from a Nomad variable, the task's environment and the service
# catalog, served by Python's http.server on a dynamic port. Until the variable exists the task waits in
# prestart, its events saying "Missing: nomad.var.block(nomad/jobs/site@default.global)".
#
#   allocrun agent &
#   allocrun var put nomad/jobs/site title=Hello greeting="from allocrun"
#   allocrun job run examples/site.nomad
#   allocrun service info site            # where it answers
#
# `allocrun var put nomad/jobs/site title=Changed greeting=again -force` re-renders the page in place
# (change_mode "noop": the server reads the file per request) and restarts the task, whose environment
# holds SITE_TITLE from the env template (change_mode "restart").
#
# The page's stylesheet comes as an artifact: the prestart task "assets" packs it (in a real job, a
# release on an https:// URL with options { checksum = "sha256:..." }) and the server's artifact block
# fetches and unpacks it into local/site/ before the templates render; a restart does not fetch it again.
job "site" {
  group "www" {
    network {
      port "http" {}
    }

    service {
      name     = "site"
      port     = "http"
      provider = "nomad"
    }

    # Runs to completion before the server starts (a prestart task that is no sidecar).
    task "assets" {
      driver = "raw_exec"

      lifecycle {
        hook = "prestart"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "cd \"$NOMAD_TASK_DIR\" && mkdir -p assets && printf 'body { font-family: sans-serif; }\\n' > assets/site.css && tar -czf \"$NOMAD_ALLOC_DIR/data/assets.tgz\" assets"]
      }
    }

    task "server" {
      driver = "raw_exec"

      artifact {
        source      = "${NOMAD_ALLOC_DIR}/data/assets.tgz"
        destination = "local/site"
      }

      config {
        command = "python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}", "--bind", "127.0.0.1", "--directory", "${NOMAD_TASK_DIR}/site"]
      }

      template {
        data        = <<EOT
<!doctype html>
{{- with nomadVar "nomad/jobs/site" }}
<title>{{ .title }}</title>
<link rel="stylesheet" href="assets/site.css">
<h1>{{ .title }}</h1>
<p>{{ .greeting | html }}</p>
{{- end }}
<p>Allocation {{ env "NOMAD_ALLOC_ID" }}, port {{ env "NOMAD_PORT_http" }}.</p>
<ul>
{{- range nomadService "site" }}
<li>{{ .Address }}:{{ .Port }}</li>
{{- end }}
</ul>
EOT
        destination = "local/site/index.html"
        change_mode = "noop"

        wait {
          min = "1s"
          max = "5s"
        }
      }

      template {
        data        = <<EOT
SITE_TITLE="{{ with nomadVar "nomad/jobs/site" }}{{ .title }}{{ end }}"
EOT
        destination = "secrets/site.env"
        env         = true
        change_mode = "restart"
        splay       = "1s"

        wait {
          min = "1s"
          max = "5s"
        }
      }
    }
  }
}

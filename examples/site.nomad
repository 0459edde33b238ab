# Artifacts and templates (issue 28): the page's template and stylesheet are downloaded (artifact blocks),
# the page is rendered from a Nomad variable, the task's environment and the service catalog (template
# blocks), and Python's http.server serves it on a dynamic port. Until the variable exists the task waits in
# prestart, its events saying "Missing: nomad.var.block(nomad/jobs/site@default.global)".
#
#   python3 -m http.server 8484 --bind 127.0.0.1 --directory examples/site &   # where the artifacts come from
#   allocrun agent --data-dir /tmp/site &
#   export ALLOCRUN_DATA_DIR=/tmp/site                                          # the commands below reach that agent
#   allocrun var put nomad/jobs/site title=Hello greeting="from allocrun"
#   allocrun job run examples/site.nomad
#   allocrun service info site                                                 # where it answers
#
# `allocrun var put nomad/jobs/site title=Changed greeting=again -force` re-renders the page in place
# (change_mode "noop": the server reads the file per request) and restarts the task, whose environment
# holds SITE_TITLE from the env template (change_mode "restart").
job "site" {
  meta {
    assets = "http://127.0.0.1:8484"
  }

  group "www" {
    network {
      port "http" {}
    }

    service {
      name     = "site"
      port     = "http"
      provider = "nomad"
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}", "--bind", "127.0.0.1", "--directory", "${NOMAD_TASK_DIR}/site"]
      }

      artifact {
        source      = "${NOMAD_META_assets}/index.html.tpl"
        destination = "local/templates/index.html.tpl"
        mode        = "file"
      }

      artifact {
        source      = "${NOMAD_META_assets}/style.css"
        destination = "local/site/style.css"
        mode        = "file"
      }

      template {
        source      = "local/templates/index.html.tpl"
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

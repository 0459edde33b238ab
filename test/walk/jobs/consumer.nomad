# Templates: the task env, the service catalog (range nomadService) and a variable with signal on change.
job "consumer" {
  group "c" {
    task "reader" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "trap 'echo got HUP; cat local/upstreams.txt' HUP; cat local/upstreams.txt; echo \"level=$LOG_LEVEL\"; while :; do sleep 1; done"]
      }

      template {
        data        = <<EOH
alloc={{ env "NOMAD_ALLOC_ID" }} host={{ env "attr.unique.hostname" }} dc={{ env "node.datacenter" }}
{{ range nomadService "checks-web" }}upstream {{ .Address }}:{{ .Port }}
{{ end }}
EOH
        destination = "local/upstreams.txt"
        change_mode = "noop"
      }

      template {
        data        = <<EOH
{{ with nomadVar "nomad/jobs/consumer" }}LOG_LEVEL={{ .level }}{{ end }}
EOH
        destination   = "secrets/app.env"
        env           = true
        change_mode   = "signal"
        change_signal = "SIGHUP"
        splay         = "100ms"

        wait {
          min = "200ms"
          max = "1s"
        }
      }
    }
  }
}

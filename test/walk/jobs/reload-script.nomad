# A template with change_mode = "script": on a variable change, change_script runs beside the task (in its
# directory, with its environment) instead of restarting or signalling it.
job "reload-script" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/app.conf; while :; do sleep 1; done"]
      }

      template {
        data        = "v={{ with nomadVar \"nomad/jobs/reload-script\" }}{{ .v }}{{ end }}\n"
        destination = "local/app.conf"
        change_mode = "script"
        splay       = "100ms"

        change_script {
          command       = "/bin/sh"
          args          = ["-c", "echo \"reloaded $(cat local/app.conf) in $NOMAD_TASK_NAME\" >> local/reloads"]
          timeout       = "10s"
          fail_on_error = true
        }

        wait {
          min = "100ms"
          max = "500ms"
        }
      }
    }
  }
}

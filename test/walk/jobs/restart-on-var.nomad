# A template reading a variable with change_mode = "restart".
job "restart-on-var" {
  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"color=$COLOR\"; exec sleep 300"]
      }

      template {
        data        = "COLOR={{ with nomadVar \"nomad/jobs/restart-on-var\" }}{{ .color }}{{ end }}\n"
        destination = "local/color.env"
        env         = true
        change_mode = "restart"
        splay       = "100ms"

        wait {
          min = "100ms"
          max = "500ms"
        }
      }
    }
  }
}

# A Nomad-native service with an http and a tcp check; the task serves on its dynamic port.
job "checks" {
  group "web" {
    network {
      port "http" {}
    }

    service {
      name     = "checks-web"
      port     = "http"
      provider = "nomad"
      tags     = ["walk", "${NOMAD_GROUP_NAME}"]

      check {
        name     = "alive"
        type     = "http"
        path     = "/"
        interval = "2s"
        timeout  = "1s"
      }

      check {
        name     = "port"
        type     = "tcp"
        interval = "2s"
        timeout  = "1s"
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}", "--bind", "127.0.0.1"]
      }
    }
  }
}

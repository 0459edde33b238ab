# The issue-27 web job: two Python HTTP servers on dynamic ports, registered as the Nomad-native
# service "web" with an HTTP check; `allocrun service info web` lists where they answer.
job "web" {
  meta {
    version = "1"
  }

  group "app" {
    count = 2

    network {
      port "http" {}
      port "admin" {
        static = 9901
      }
    }

    service {
      name     = "web"
      port     = "http"
      provider = "nomad"
      tags     = ["v${NOMAD_META_version}"]

      check {
        type     = "http"
        path     = "/"
        interval = "5s"
        timeout  = "2s"

        check_restart {
          limit = 3
          grace = "10s"
        }
      }
    }

    update {
      health_check     = "checks"
      min_healthy_time = "10s"
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}"]
      }
    }
  }
}

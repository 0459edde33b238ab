# The issue-27 web job: two Python HTTP servers on dynamic ports, registered as the Nomad-native
# service "web" with an HTTP check; `allocrun service info web` lists where they answer.
#
# The issue's job reserves the admin port statically (static = 9901). allocrun runs one node, where
# two instances cannot hold one static port: the second would be blocked, as Nomad blocks it ("reserved
# port collision"). So the admin port is dynamic here; with count = 1, `static = 9901` reserves it.
job "web" {
  meta {
    version = "1"
  }

  group "app" {
    count = 2

    network {
      port "http" {}
      port "admin" {}
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

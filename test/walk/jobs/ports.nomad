# A group network with a dynamic and a static port, read by the task through Nomad's port variables.
# The walk fills in @STATIC_PORT@ with a port free at the time.
job "ports" {
  datacenters = ["dc1"]
  type        = "service"

  meta {
    owner = "walk"
  }

  group "api" {
    network {
      port "http" {}
      port "admin" {
        static = @STATIC_PORT@
      }
    }

    task "server" {
      driver = "raw_exec"

      env {
        GREETING = "hello from ${NOMAD_JOB_NAME}.${NOMAD_GROUP_NAME}"
        OWNER    = "${NOMAD_META_owner}"
      }

      config {
        command = "/bin/sh"
        args = ["-c", "echo http=$NOMAD_PORT_http admin=$NOMAD_PORT_admin addr=$NOMAD_ADDR_http ip=$NOMAD_IP_admin host=$NOMAD_HOST_PORT_admin; echo \"$GREETING owner=$OWNER\"; exec python3 -m http.server ${NOMAD_PORT_http} --bind 127.0.0.1"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}

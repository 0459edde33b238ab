# A script check on a Nomad-native service: Nomad's provider runs http and tcp checks only.
job "script-check" {
  group "g" {
    network {
      port "http" {}
    }

    service {
      name     = "scripted"
      port     = "http"
      provider = "nomad"

      check {
        type     = "script"
        command  = "/bin/true"
        interval = "5s"
        timeout  = "1s"
      }
    }

    task "t" {
      driver = "raw_exec"

      config {
        command = "sleep"
        args    = ["300"]
      }
    }
  }
}

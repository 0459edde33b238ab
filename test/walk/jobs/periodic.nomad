# A periodic batch job: Nomad registers it and launches a child job on each tick, never at registration.
job "periodic" {
  type = "batch"

  periodic {
    crons            = ["*/15 * * * *"]
    prohibit_overlap = true
  }

  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "date"]
      }
    }
  }
}

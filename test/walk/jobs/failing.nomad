# A batch task that always fails: one restart after a short delay, then the allocation fails; no reschedule.
job "failing" {
  type = "batch"

  group "g" {
    restart {
      attempts = 1
      delay    = "1s"
      interval = "1m"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo trying; exit 3"]
      }
    }
  }
}

# A parameterized batch job: Nomad registers it and runs it only when dispatched.
job "parameterized" {
  type = "batch"

  parameterized {
    payload       = "optional"
    meta_required = ["target"]
  }

  group "g" {
    task "t" {
      driver = "raw_exec"

      dispatch_payload {
        file = "input.txt"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo target=${NOMAD_META_target}"]
      }
    }
  }
}

# A parameterized batch job: Nomad registers it and runs it only when dispatched; each dispatch's meta is
# in the task's env and its payload in the task's local/ directory.
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
        args    = ["-c", "echo target=${NOMAD_META_target}; cat ${NOMAD_TASK_DIR}/input.txt 2>/dev/null || echo no payload"]
      }
    }
  }
}

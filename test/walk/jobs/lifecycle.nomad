# Lifecycle hooks: a prestart init task, a prestart sidecar, a poststart task and a poststop task.
job "lifecycle" {
  type = "batch"

  group "g" {
    task "init" {
      lifecycle {
        hook    = "prestart"
        sidecar = false
      }

      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo init > ${NOMAD_ALLOC_DIR}/init.txt"]
      }
    }

    task "sidecar" {
      lifecycle {
        hook    = "prestart"
        sidecar = true
      }

      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo sidecar up; exec sleep 300"]
      }
    }

    task "main" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "cat ${NOMAD_ALLOC_DIR}/init.txt; sleep 1; echo main done"]
      }
    }

    task "announce" {
      lifecycle {
        hook = "poststart"
      }

      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo announced"]
      }
    }

    task "cleanup" {
      lifecycle {
        hook = "poststop"
      }

      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo cleaned up"]
      }
    }
  }
}

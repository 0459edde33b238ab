# A small batch job for the mock driver: a prestart task prepares, the main task runs,
# a poststop task cleans up. Runs as it is: `allocrun run examples/batch.nomad`.
job "batch" {
  type        = "batch"
  datacenters = ["dc1"]

  meta {
    owner = "examples"
  }

  group "work" {
    count = 1

    restart {
      attempts = 1
      delay    = "1s"
      interval = "1m"
      mode     = "fail"
    }

    task "setup" {
      driver = "mock"

      lifecycle {
        hook    = "prestart"
        sidecar = false
      }

      config {
        run_for       = "500ms"
        stdout_string = "setup done"
      }
    }

    task "main" {
      driver       = "mock"
      kill_timeout = "5s"
      kill_signal  = "SIGINT"

      config {
        run_for       = "2s"
        exit_code     = 0
        stdout_string = "working on ${NOMAD_JOB_NAME}"
      }

      env {
        GREETING = "hello"
      }

      logs {
        max_files     = 2
        max_file_size = 1
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }

    task "cleanup" {
      driver = "mock"

      lifecycle {
        hook = "poststop"
      }

      config {
        run_for = "250ms"
      }
    }
  }
}

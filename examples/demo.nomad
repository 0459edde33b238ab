# The `npm start` demo: one batch allocation whose tasks are real processes (raw_exec, /bin/sh), one per
# lifecycle stage, so the live table shows Nomad's ordering:
#   init (prestart) -> main, with sidecar (poststart, sidecar) beside it -> cleanup (poststop)
# Run it:   node bin/allocrun.js run examples/demo.nomad
# Then:     node bin/allocrun.js status        (the last run's allocations and their task events)
job "demo" {
  type = "batch"

  group "app" {
    # Fail fast: a demo task that breaks should say so at once, not retry for minutes.
    restart {
      attempts = 0
      mode     = "fail"
    }

    # Prestart: prepares the shared alloc dir before any main task starts.
    task "init" {
      driver = "raw_exec"

      lifecycle {
        hook = "prestart"
      }

      config {
        command = "/bin/sh"
        args = ["-c", <<-EOT
          echo "written by init at $(date +%T)" > "${NOMAD_ALLOC_DIR}/data/greeting.txt"
          echo "init: wrote ${NOMAD_ALLOC_DIR}/data/greeting.txt"
        EOT
        ]
      }
    }

    # The main task: reads what init wrote, then works for about 8 seconds.
    task "main" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args = ["-c", <<-EOT
          echo "main: $(cat "${NOMAD_ALLOC_DIR}/data/greeting.txt")"
          for i in 1 2 3 4 5 6 7 8; do
            echo "main: step $i of 8"
            sleep 1
          done
          echo "main: done"
        EOT
        ]
      }
    }

    # Poststart sidecar: starts once main is running and is killed when main is done.
    task "sidecar" {
      driver       = "raw_exec"
      kill_timeout = "2s"

      lifecycle {
        hook    = "poststart"
        sidecar = true
      }

      config {
        command = "/bin/sh"
        args = ["-c", <<-EOT
          while true; do
            echo "sidecar: heartbeat at $(date +%T)"
            sleep 2
          done
        EOT
        ]
      }
    }

    # Poststop: runs after every other task is dead, also when the run is stopped with Ctrl-C.
    task "cleanup" {
      driver = "raw_exec"

      lifecycle {
        hook = "poststop"
      }

      config {
        command = "/bin/sh"
        args = ["-c", <<-EOT
          rm -f "${NOMAD_ALLOC_DIR}/data/greeting.txt"
          echo "cleanup: removed the greeting"
        EOT
        ]
      }
    }
  }
}

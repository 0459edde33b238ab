# kill_signal and kill_timeout: the task traps SIGINT, says so, and exits cleanly within its timeout.
job "kill" {
  group "g" {
    task "t" {
      driver       = "raw_exec"
      kill_signal  = "SIGINT"
      kill_timeout = "10s"

      config {
        command = "/bin/sh"
        args    = ["-c", "trap 'echo caught INT; exit 0' INT; echo ready; while :; do sleep 1; done"]
      }
    }
  }
}

# Valid HCL with two schema errors, for `allocrun validate` and the tests:
# a duration that is not one (line 12) and a key Nomad does not have (line 13).
job "bad-schema" {
  type = "batch"

  group "api" {
    count = 1

    task "app" {
      driver       = "mock"
      config { run_for = "1s" }
      kill_timeout = "soon"
      kill_signall = "SIGINT"
    }
  }
}

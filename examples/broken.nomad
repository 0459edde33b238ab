# A job file with a syntax error, for `allocrun validate` and the tests: the `type`
# attribute on line 5 has no value.
job "broken" {
  datacenters = ["dc1"]
  type =

  group "g" {
    task "t" {
      driver = "mock"
    }
  }
}

# A constraint no Linux node satisfies: Nomad places nothing and says which constraint filtered the node.
job "constraint-no" {
  type = "batch"

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "windows"
  }

  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo should not run"]
      }
    }
  }
}

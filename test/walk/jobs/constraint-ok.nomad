# Constraints the node satisfies.
job "constraint-ok" {
  type = "batch"

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "g" {
    constraint {
      attribute = "${attr.cpu.numcores}"
      operator  = ">="
      value     = "1"
    }

    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo kernel ${attr.kernel.name} on ${node.unique.name}"]
      }
    }
  }
}

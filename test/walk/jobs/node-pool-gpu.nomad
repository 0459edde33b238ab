# A job in a pool no node registered in: Nomad refuses to register it.
job "node-pool-gpu" {
  type      = "batch"
  node_pool = "gpu"

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

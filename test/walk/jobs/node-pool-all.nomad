# A job in the built-in pool "all", which holds every node: placed on the agent's node (in "default").
job "node-pool-all" {
  type      = "batch"
  node_pool = "all"

  group "g" {
    task "t" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo pool ${node.pool}"]
      }
    }
  }
}

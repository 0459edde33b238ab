# HCL2 expressions and functions, as real Nomad job files use them: a conditional count, a for-expression
# with a filter, merge() of a local map, format(), upper(), lookup(), a %{for} directive in a heredoc, and
# file() read relative to this job file (expressions.txt beside it).
variable "env" {
  type    = string
  default = "dev"
}

variable "ports" {
  type    = list(number)
  default = [8080, 8443]
}

variable "sizes" {
  type    = map(number)
  default = { prod = 512 }
}

locals {
  base_env = { APP = "expressions" }
  greeting = trimspace(file("expressions.txt"))
}

job "expressions" {
  type = "batch"

  group "g" {
    count = var.env == "prod" ? 3 : 1

    task "t" {
      driver = "raw_exec"

      env = merge(local.base_env, {
        GREETING = upper(local.greeting)
        PORTS    = join(",", [for p in var.ports : "${p}/tcp" if p > 1024])
        MEMORY   = "${lookup(var.sizes, var.env, 256) * 2}"
        NAME     = format("%s-%d", var.env, length(var.ports))
      })

      template {
        destination = "local/ports.txt"
        data        = <<EOT
%{ for i, p in var.ports ~}
port ${i}: ${p}
%{ endfor ~}
EOT
      }

      config {
        command = "/bin/sh"
        args    = concat(["-c"], ["echo \"$APP $GREETING $PORTS $MEMORY $NAME ${NOMAD_ALLOC_INDEX}\"; cat local/ports.txt"])
      }
    }
  }
}
